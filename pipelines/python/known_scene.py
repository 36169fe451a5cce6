#!/usr/bin/python3
"""A detector output whose NMS result is known exactly (numpy only).

known_tensor(k) is frame k's raw YOLOv8 output [1, 84, 8400] (float32,
model 640x640) holding six anchors; every other score is 0. On 640x480
video (letterbox: scale 1, 80 pixels of padding top and bottom), cudanms
with iou 0.45 and score-threshold 0.25 keeps, with dx = 16 k:

  #0 person 0.875  x=120+dx y=60  w=80  h=200
  #1 car    0.750  x=320+dx y=192 w=160 h=96
  #2 truck  0.500  x=320+dx y=192 w=160 h=96   (other class: not suppressed)
  #3 dog    0.375  x=488    y=96  w=64  h=48

A second person anchor (IoU 0.87 with #0) is suppressed and one at 0.1875
is under the threshold. appsrc_numpy.py feeds these tensors from memory;

  python3 known_scene.py DIR [FRAMES]

writes them as DIR/frame-0.npy ... for replay.sh (tensorinject location=).
"""
import os
import sys

import numpy as np


def known_scene(k):
    """Anchors (cx, cy, w, h, class_id, score) of frame k, model pixels."""
    dx = 16 * k
    return [
        (160 + dx, 240, 80, 200, 0, 0.875),   # person
        (164 + dx, 244, 80, 200, 0, 0.8125),  # the same person again
        (400 + dx, 320, 160, 96, 2, 0.75),    # car
        (400 + dx, 320, 160, 96, 7, 0.5),     # ... also scored as truck
        (520, 200, 64, 48, 16, 0.375),        # dog
        (300, 400, 50, 50, 0, 0.1875),        # below the threshold
    ]


def yolov8_tensor(anchors, num_classes=80, num_anchors=8400):
    """A raw YOLOv8 output [1, 4+C, N] holding the given anchors, each
    (cx, cy, w, h, class_id, score) in model pixels; the rest scores 0."""
    t = np.zeros((1, 4 + num_classes, num_anchors), np.float32)
    for i, (cx, cy, w, h, class_id, score) in enumerate(anchors):
        t[0, 0:4, i] = (cx, cy, w, h)
        t[0, 4 + class_id, i] = score
    return t


def known_tensor(k):
    return yolov8_tensor(known_scene(k))


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: known_scene.py DIR [FRAMES]", file=sys.stderr)
        return 2
    os.makedirs(sys.argv[1], exist_ok=True)
    for k in range(int(sys.argv[2]) if len(sys.argv) == 3 else 3):
        np.save(os.path.join(sys.argv[1], "frame-%d.npy" % k),
                known_tensor(k))
    return 0


if __name__ == "__main__":
    sys.exit(main())

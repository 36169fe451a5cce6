#!/usr/bin/python3
"""Keypoints and masks through the pipelines/ examples.

Pose from Python: a hand yolov8-pose tensor [1, 5+2*3, 2] (K = 2, D = 3;
model 64x48 = the GRAY8 frame, so a keypoint keeps its value), attached
by attach_tensor(), through cudanms layout=yolov8-pose: detections() gives
the kept person's box and "keypoints": {"points": [[x, y, score], ...]}
exactly; with keypoint-dims=2 the same six keypoint values are three
[x, y] points.

Segmentation from Python: tests/gst/test_heads.c's hand tensor (model
16x16 = the frame, prototypes [1, 2, 4, 4]) attached as two tensors by
attach_tensor() with GStreamer's ids: detections() gives each box's "mask"
and mask_bitmap() its bitmap, as worked out there: columns 3..7 of
x 3..13 set on rows 1..8; rows 10 and 11 of y 10..15 set across x 0..15.

cudanms-print --json and frame_json() of detections() print the same
objects, value for value, for tensorinject's pose and segmentation scenes
(2 frames each)."""
import os
import sys

from common import PIPELINES, PRINT, json_lines, need, run

need("numpy", "gi")
sys.path.insert(0, os.path.join(PIPELINES, "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
import numpy as np  # noqa: E402
from cudanms_meta import (Gst, attach_tensor, detections,  # noqa: E402
                          frame_json, mask_bitmap)
from gray_appsrc import gray_frame, gray_pipeline  # noqa: E402


def push(width, height, props, tensors):
    pipeline, src, sink = gray_pipeline(width, height, props)
    buf = gray_frame(width, height, 0)
    for tid, a in tensors:
        attach_tensor(buf, a, tid)
    src.emit("push-buffer", buf)
    got = detections(sink.emit("pull-sample").get_buffer())
    pipeline.set_state(Gst.State.NULL)
    return got


def pose():
    # anchor 0: box 10..30 x 8..40, score 0.9, keypoints (12.5, 9.25, 0.8)
    # and (27.75, 39.5, 0.25); anchor 1: score 0.1 (no candidate)
    t = np.array([[[20, 5], [24, 5], [20, 4], [32, 4], [0.9, 0.1],
                   [12.5, 0], [9.25, 0], [0.8, 0],
                   [27.75, 0], [39.5, 0], [0.25, 0]]], np.float32)
    got = push(64, 48, "layout=yolov8-pose model-size=64x48 "
               "letterbox=false", [("detections", t)])
    assert len(got) == 1, got
    d = got[0]["detection"]
    assert (got[0]["x"], got[0]["y"], got[0]["w"], got[0]["h"]) == \
        (10, 8, 20, 32), got
    assert d["keypoints"] == {"points": [[12.5, 9.25, 0.8], [27.75, 39.5,
                                                             0.25]]}, d
    # D = 2: the same six keypoint values are three (x, y) pairs
    got = push(64, 48, "layout=yolov8-pose keypoint-dims=2 "
               "model-size=64x48 letterbox=false", [("detections", t)])
    assert got[0]["detection"]["keypoints"] == {"points": [
        [12.5, 9.25], [0.8, 27.75], [39.5, 0.25]]}, got
    print("pose: keypoints exact (D = 3 and D = 2)")


def seg():
    dets = np.array([[[7.85, 8.0], [5.0, 13.0], [10.7, 16.0], [8.0, 6.0],
                      [0.9, 0.8], [1.0, 0.0], [0.0, -1.0]]], np.float32)
    protos = np.zeros((1, 2, 4, 4), np.float32)
    protos[0, 0, :, :2] = 2.0
    protos[0, 0, :, 2:] = -2.0
    protos[0, 1] = 1.0
    protos[0, 1, 2, :] = -1.0
    got = push(16, 16, "layout=yolov8-seg model-size=16x16 letterbox=false",
               [("yolo-v8-segmentation-out-detections", dets),
                ("yolo-v8-segmentation-out-protos", protos)])
    assert len(got) == 2, got
    m0, m1 = (o["detection"]["mask"] for o in got)
    assert (m0["x"], m0["y"], m0["width"], m0["height"]) == (3, 1, 11, 8), m0
    want0 = np.zeros((8, 11), np.uint8)
    want0[:, :5] = 1
    assert (mask_bitmap(m0) == want0).all(), mask_bitmap(m0)
    assert (m1["x"], m1["y"], m1["width"], m1["height"]) == (0, 10, 16, 6), m1
    want1 = np.zeros((6, 16), np.uint8)
    want1[:2] = 1
    assert (mask_bitmap(m1) == want1).all(), mask_bitmap(m1)
    print("seg: masks exact")


def print_matches(inject, nms):
    desc = ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,"
            "width=320,height=240,framerate=30/1 ! tensorinject %s "
            "! cudanms name=nms %s" % (inject, nms))
    rc, out = run([PRINT, "--json", desc + " ! fakesink"])
    assert rc == 0, out
    frames = json_lines(out)
    assert len(frames) == 2, out
    pipeline = Gst.parse_launch(desc + " ! appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    for k in range(2):
        buf = sink.emit("pull-sample").get_buffer()
        got = detections(buf)
        assert got, "no detection"
        assert frames[k] == json_lines(frame_json(buf.pts, 320, 240,
                                                  got))[0], (frames[k], got)
    pipeline.set_state(Gst.State.NULL)
    return sum(len(f["objects"]) for f in frames)


def main():
    Gst.init(None)
    pose()
    seg()
    n = print_matches("layout=yolov8-pose seed=3 num-objects=3 noise=0",
                      "layout=yolov8-pose")
    assert n == 6, n
    n = print_matches("layout=yolov8-seg seed=5 num-objects=4 noise=0",
                      "layout=yolov8-seg")
    assert n == 8, n
    print("OK: keypoints and masks from Python exact; cudanms-print --json "
          "and detections() agree on the pose and segmentation scenes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

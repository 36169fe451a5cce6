#!/usr/bin/python3
"""cudanms behind Python inference code: appsrc ! cudanms ! appsink.

Each frame goes in through appsrc with the detector's raw output attached as
a NumPy tensor; the detections come out of appsink as ROI metas. Here the
"detector" is known_scene.known_tensor(): a YOLOv8 [1, 84, 8400] tensor
whose detections are known exactly (4 per frame, listed in known_scene.py;
replay.sh replays the same tensors from .npy files).

  python3 appsrc_numpy.py [--frames N] [--json]
Needs GST_PLUGIN_PATH_1_0 to hold the cudanms plugin. Exits 0 after EOS.
"""
import argparse
import os
import sys

import numpy as np

from cudanms_meta import Gst, attach_tensor, detections, frame_json, frame_text
from known_scene import known_tensor

WIDTH, HEIGHT = 640, 480
LABELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "coco.names")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--json", action="store_true",
                    help="one JSON line per frame instead of text")
    args = ap.parse_args()

    Gst.init(None)
    pipeline = Gst.parse_launch(
        "appsrc name=src format=time caps=video/x-raw,format=RGB,"
        "width=%d,height=%d,framerate=30/1 "
        "! cudanms model-size=640x640 label-file=\"%s\" "
        "! appsink name=sink sync=false" % (WIDTH, HEIGHT, LABELS))
    src = pipeline.get_by_name("src")
    sink = pipeline.get_by_name("sink")
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)

    frames = total = 0
    for k in range(args.frames):
        image = np.zeros((HEIGHT, WIDTH, 3), np.uint8)  # your frame
        tensor = known_tensor(k)                        # your model(image)
        buf = Gst.Buffer.new_wrapped(image.tobytes())
        buf.pts = k * Gst.SECOND // 30
        buf.duration = Gst.SECOND // 30
        attach_tensor(buf, tensor)
        src.emit("push-buffer", buf)

        sample = sink.emit("try-pull-sample", 5 * Gst.SECOND)
        if sample is None:
            break
        out = sample.get_buffer()
        objects = detections(out)
        frames += 1
        total += len(objects)
        if args.json:
            print(frame_json(out.pts, WIDTH, HEIGHT, objects))
        else:
            print(frame_text(k, out.pts, objects))
    src.emit("end-of-stream")

    msg = bus.timed_pop_filtered(10 * Gst.SECOND,
                                 Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if msg is None or msg.type == Gst.MessageType.ERROR:
        err = msg.parse_error()[0].message if msg else "no EOS"
        print("appsrc_numpy: %s" % err, file=sys.stderr)
        return 1
    if not args.json:
        print("%d frames, %d detections" % (frames, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())

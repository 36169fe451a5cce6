#!/usr/bin/python3
"""Oriented boxes through the pipelines/ examples: a YOLOv8-OBB tensor
[1, 4+2+1, 3] with the id yolo-v8-obb-out (cudanms layout=auto reads it as
yolov8-obb) on a 64x48 GRAY8 frame, model = frame, no letterbox:
  a0 cx 20 cy 24 w 24 h 8 angle 0.25  class 1 0.875
  a1 cx 21 cy 24 w 24 h 8 angle 0.25  class 1 0.5    a0's near duplicate
  a2 cx 50 cy 10 w 10 h 6 angle -0.5  class 0 0.75   clipped at the top
kept: a0, a2. cudanms_meta.detections() (appsrc ! cudanms ! appsink) gives
each its "oriented_box" (cx, cy, width, height, angle: the tensor's floats)
and the ROI of its hull clipped to the frame, computed here; cudanms-print
--json and its text, replaying the same tensor from a .npy through
tensorinject, print the same objects as detections(), frame_json() and
frame_text()."""
import math
import os
import sys
import tempfile

from common import PIPELINES, PRINT, json_lines, need, run

need("numpy", "gi")
sys.path.insert(0, os.path.join(PIPELINES, "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
import numpy as np  # noqa: E402
from cudanms_meta import (Gst, attach_tensor, detections, frame_json,  # noqa: E402
                          frame_text)
from gray_appsrc import gray_frame, gray_pipeline  # noqa: E402

W, H = 64, 48
ANCHORS = [  # cx, cy, w, h, angle, class, score
    (20, 24, 24, 8, 0.25, 1, 0.875),
    (21, 24, 24, 8, 0.25, 1, 0.5),
    (50, 10, 10, 6, -0.5, 0, 0.75),
]
KEPT = [0, 2]
NMS = "name=nms model-size=%dx%d letterbox=false" % (W, H)


def tensor():
    t = np.zeros((1, 4 + 2 + 1, len(ANCHORS)), np.float32)
    for i, (cx, cy, w, h, a, c, s) in enumerate(ANCHORS):
        t[0, 0:4, i] = (cx, cy, w, h)
        t[0, 4 + c, i] = s
        t[0, 6, i] = a
    return t


def expected():
    """The kept detections as detections() gives them, worked out here:
    the hull in double, clipped, floor/ceil for the ROI."""
    out = []
    for rid, i in enumerate(KEPT):
        cx, cy, w, h, a, c, s = [float(np.float32(v)) for v in ANCHORS[i]]
        ex = abs(w / 2 * math.cos(a)) + abs(h / 2 * math.sin(a))
        ey = abs(w / 2 * math.sin(a)) + abs(h / 2 * math.cos(a))
        hull = [min(max(v, 0.0), lim) for v, lim in
                ((cx - ex, W), (cy - ey, H), (cx + ex, W), (cy + ey, H))]
        x, y = math.floor(hull[0]), math.floor(hull[1])
        out.append({
            "region_id": rid, "roi_type": "class-%d" % c,
            "x": x, "y": y, "w": math.ceil(hull[2]) - x,
            "h": math.ceil(hull[3]) - y,
            "detection": {
                "bounding_box": {
                    "x_min": round(hull[0] / W, 6),
                    "y_min": round(hull[1] / H, 6),
                    "x_max": round(hull[2] / W, 6),
                    "y_max": round(hull[3] / H, 6)},
                "confidence": round(float(np.float32(s)), 6),
                "label_id": int(c), "label": "class-%d" % c,
                "producer": "nms",
                "oriented_box": {
                    "cx": round(cx, 6), "cy": round(cy, 6),
                    "width": round(w, 6), "height": round(h, 6),
                    "angle": round(float(np.float32(a)), 6)}}})
    return out


def close(got, want, path="."):
    """Equal, floats within 1e-6 (the hull: the library's float arithmetic
    against the double here)."""
    if isinstance(want, dict):
        assert set(got) == set(want), (path, sorted(got), sorted(want))
        for k in want:
            close(got[k], want[k], path + "/" + k)
    elif isinstance(want, list):
        assert len(got) == len(want), (path, len(got), len(want))
        for k, (g, w) in enumerate(zip(got, want)):
            close(g, w, "%s[%d]" % (path, k))
    elif isinstance(want, float):
        assert abs(got - want) <= 1e-6, (path, got, want)
    else:
        assert got == want, (path, got, want)


def main():
    Gst.init(None)
    want = expected()
    # the hand-worked ROIs: a0's hull [7.43, 17.14, 32.57, 30.86], a2's
    # [44.07, 4.97, 55.93, 15.03]
    assert [(o["x"], o["y"], o["w"], o["h"]) for o in want] == [
        (7, 17, 26, 14), (44, 4, 12, 12)], want

    pipeline, src, sink = gray_pipeline(W, H, NMS)
    buf = gray_frame(W, H, 0)
    attach_tensor(buf, tensor(), tensor_id="yolo-v8-obb-out")
    src.emit("push-buffer", buf)
    got = detections(sink.emit("pull-sample").get_buffer())
    pipeline.set_state(Gst.State.NULL)
    close(got, want)
    # the oriented fields are the tensor's floats, to the 6 decimals
    assert got[0]["detection"]["oriented_box"] == {
        "cx": 20.0, "cy": 24.0, "width": 24.0, "height": 8.0,
        "angle": 0.25}, got[0]
    assert got[1]["detection"]["oriented_box"]["angle"] == -0.5, got[1]

    with tempfile.TemporaryDirectory() as d:
        npy = os.path.join(d, "obb.npy")
        np.save(npy, tensor())
        desc = ("videotestsrc num-buffers=1 ! video/x-raw,format=GRAY8,"
                "width=%d,height=%d,framerate=30/1 ! tensorinject "
                "location=%s tensor-id=yolo-v8-obb-out ! cudanms %s ! "
                "fakesink" % (W, H, npy, NMS))
        rc, out = run([PRINT, "--json", desc])
        assert rc == 0, rc
        frames = json_lines(out)
        assert len(frames) == 1, out
        # the same frame, value for value, as frame_json() of detections()
        assert frames[0] == json_lines(frame_json(0, W, H, got))[0], (
            frames[0], got)
        rc, out = run([PRINT, desc])
        assert rc == 0, rc
        lines = out.splitlines()
        assert lines[:3] == frame_text(0, 0, got).splitlines(), (lines, got)
        assert lines[1].split()[-4:] == ["cx=20.0", "cy=24.0", "24.0x8.0",
                                         "angle=0.2500"], lines[1]
    print("OK: oriented boxes through cudanms_meta and cudanms-print, with "
          "their angle")
    return 0


if __name__ == "__main__":
    sys.exit(main())

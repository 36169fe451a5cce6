#!/usr/bin/python3
"""Lanes through the pipelines/ examples: a LaneATT tensor [1, 4, 5+4]
(S = 4 rows, n = 3 strips) with cudanms's own id laneatt-proposals (cudanms
layout=auto reads it as laneatt), model 640x360 letterboxed on a 1280x720
GRAY8 frame: gain 0.5, no padding, row i at model y = (3 - i) * 120, so a
point is (2 x, 2 y): frame y 720, 480, 240, 0. Rows: logits (0, l1),
start_y, start_x, length, x0..x3; score 1 / (1 + e^-l1):
  p0 l1 3  start 0   length 4  x 100.25 110 120 130
  p1 l1 2  start 0   length 4  x 110 120 130 140   within 9.9375 of p0
  p2 l1 1  start 1/3 length 3  x -5 410 420 430.3  rows 1..3 (row 0 x < 0)
  p3 l1 4  start 0   length 4  x -10 -10 -10 50    one point: dropped
kept (lane-distance 50): p0, p2. cudanms_meta.detections() (appsrc !
cudanms ! appsink) gives each its "lane" points and the ROI of their
rectangle, worked out here; cudanms-print --json, replaying the same
tensor from a .npy through tensorinject, prints the same objects as
frame_json() of detections()."""
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
from cudanms_meta import Gst, attach_tensor, detections, frame_json  # noqa: E402
from gray_appsrc import gray_frame, gray_pipeline  # noqa: E402

W, H = 1280, 720
LANES = [  # l1, start_y, length, x0..x3
    (3, 0.0, 4, (100.25, 110, 120, 130)),
    (2, 0.0, 4, (110, 120, 130, 140)),
    (1, 1.0 / 3.0, 3, (-5, 410, 420, 430.3)),
    (4, 0.0, 4, (-10, -10, -10, 50)),
]
NMS = "name=nms model-size=640x360"


def tensor():
    t = np.zeros((1, len(LANES), 5 + 4), np.float32)
    for i, (l1, sy, length, xs) in enumerate(LANES):
        t[0, i, :5] = (0, l1, sy, xs[1], length)
        t[0, i, 5:] = xs
    return t


# the frame points of p0 and p2 by hand: (2 x, y) for their rows
POINTS = {
    0: [(2 * 100.25, 720.0), (220.0, 480.0), (240.0, 240.0), (260.0, 0.0)],
    2: [(820.0, 480.0), (840.0, 240.0),
        (2 * float(np.float32(430.3)), 0.0)],
}


def expected():
    out = []
    for rid, i in enumerate((0, 2)):
        pts = POINTS[i]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        rect = (min(xs), min(ys), max(xs), max(ys))
        x, y = math.floor(rect[0]), math.floor(rect[1])
        score = float(np.float32(1.0 / (1.0 + math.exp(-LANES[i][0]))))
        out.append({
            "region_id": rid, "roi_type": "lane",
            "x": x, "y": y, "w": math.ceil(rect[2]) - x,
            "h": math.ceil(rect[3]) - y,
            "detection": {
                "bounding_box": {
                    "x_min": round(rect[0] / W, 6),
                    "y_min": round(rect[1] / H, 6),
                    "x_max": round(rect[2] / W, 6),
                    "y_max": round(rect[3] / H, 6)},
                "confidence": round(score, 6),
                "label_id": 0, "label": "lane",
                "producer": "nms",
                "lane": {"points": [[round(px, 6), round(py, 6)]
                                    for px, py in pts]}}})
    return out


def main():
    Gst.init(None)
    want = expected()
    # the hand-worked ROIs: p0 [200.5, 0, 260, 720], p2 [820, 0,
    # 860.59998, 480]
    assert [(o["x"], o["y"], o["w"], o["h"]) for o in want] == [
        (200, 0, 60, 720), (820, 0, 41, 480)], want

    pipeline, src, sink = gray_pipeline(W, H, NMS)
    buf = gray_frame(W, H, 0)
    attach_tensor(buf, tensor(), tensor_id="laneatt-proposals")
    src.emit("push-buffer", buf)
    got = detections(sink.emit("pull-sample").get_buffer())
    pipeline.set_state(Gst.State.NULL)
    assert got == want, (got, want)
    # exact points: the float32 frame values, to the 6 decimals
    assert got[0]["detection"]["lane"]["points"] == [
        [200.5, 720.0], [220.0, 480.0], [240.0, 240.0], [260.0, 0.0]], got[0]
    assert got[1]["detection"]["lane"]["points"] == [
        [820.0, 480.0], [840.0, 240.0], [860.599976, 0.0]], got[1]

    with tempfile.TemporaryDirectory() as d:
        npy = os.path.join(d, "lanes.npy")
        np.save(npy, tensor())
        desc = ("videotestsrc num-buffers=1 ! video/x-raw,format=GRAY8,"
                "width=%d,height=%d,framerate=30/1 ! tensorinject "
                "location=%s tensor-id=laneatt-proposals ! cudanms %s ! "
                "fakesink" % (W, H, npy, NMS))
        rc, out = run([PRINT, "--json", desc])
        assert rc == 0, rc
        frames = json_lines(out)
        assert len(frames) == 1, out
        # the same frame, value for value, as frame_json() of detections()
        assert frames[0] == json_lines(frame_json(0, W, H, got))[0], (
            frames[0], got)
        assert frames[0]["objects"][1]["detection"]["lane"] == {
            "points": [[820.0, 480.0], [840.0, 240.0], [860.599976, 0.0]]}
    print("OK: lanes through cudanms_meta and cudanms-print, with their "
          "points")
    return 0


if __name__ == "__main__":
    sys.exit(main())

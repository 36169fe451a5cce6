#!/usr/bin/python3
"""Every JSON line the project writes is strict JSON, NaN and infinite
keypoints included (the contract passes them through as the tensor has
them): they are null, never NaN, Infinity, nan or inf, which a strict
parser refuses. Parsed here with json.loads refusing every such constant
(common.strict_json).

One hand yolov8-pose tensor [1, 5+2*3, 2] (K = 2, D = 3; model 64x48 =
the GRAY8 frame, letterbox=false, so a keypoint keeps its value):
  anchor 0: box 10..30 x 8..40, score 0.9, keypoints (NaN, +Inf, -Inf)
            and (-Inf, 39.5, NaN)
  anchor 1: box 46..54 x 6..14, score 0.8, keypoints (12.5, NaN, 0.25)
            and (+Inf, 3, +Inf)
through cudanms-tool decode (each line exact), cudanms-print --json
(tensorinject replaying the tensor; the frame exact) and frame_json() of
detections() (appsrc, attach_tensor(); the same frame as cudanms-print's),
and frame_json() of objects holding NaN and infinities in every kind of
field."""
import os
import sys
import tempfile

from common import PIPELINES, PRINT, TOOL, json_lines, need, run, strict_json

need("numpy", "gi")
sys.path.insert(0, os.path.join(PIPELINES, "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
import numpy as np  # noqa: E402
from cudanms_meta import (Gst, attach_tensor, detections,  # noqa: E402
                          frame_json)
from gray_appsrc import gray_frame, gray_pipeline  # noqa: E402

NAN, INF = float("nan"), float("inf")
W, H = 64, 48

TENSOR = np.array([[[20, 50], [24, 10], [20, 8], [32, 8], [0.9, 0.8],
                    [NAN, 12.5], [INF, NAN], [-INF, 0.25],
                    [-INF, INF], [39.5, 3], [NAN, INF]]], np.float32)

# the kept records: box x y w h (frame pixels), score, keypoints
KEPT = [
    ((10, 8, 20, 32), 0.9, [[None, None, None], [None, 39.5, None]]),
    ((46, 6, 8, 8), 0.8, [[12.5, None, 0.25], [None, 3, None]]),
]

NMS = "name=nms layout=yolov8-pose model-size=%dx%d letterbox=false" % (W, H)


def check_strict_parser():
    """The parser refuses what the old lines held."""
    for bad in ('{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}',
                '{"a": nan}', '{"a": inf}'):
        try:
            strict_json(bad)
        except ValueError:
            continue
        raise AssertionError("the strict parser took %s" % bad)


def tool_lines(npy):
    rc, out = run([TOOL, "decode", "--tensor", npy, "--layout",
                   "yolov8-pose", "--model-size", "%dx%d" % (W, H),
                   "--frame-size", "%dx%d" % (W, H), "--score-threshold",
                   "0.25", "--iou", "0.5"])
    assert rc == 0, out
    got = json_lines(out)
    want = [{"x": b[0], "y": b[1], "w": b[2], "h": b[3],
              "confidence": float(np.float32(s)), "label_id": 0,
              "keypoints": kp} for b, s, kp in KEPT]
    # the tool prints %.9g: a float32's value to the last bit
    for g in got:
        g["confidence"] = float(np.float32(g["confidence"]))
    assert got == want, (got, want)
    print("cudanms-tool decode: %d strict lines, exact" % len(got))


def frame_objects(frame):
    """(x, y, w, h, confidence, keypoints) of each object of a frame."""
    return [((o["x"], o["y"], o["w"], o["h"]),
             o["detection"]["confidence"],
             o["detection"]["keypoints"]["points"])
            for o in frame["objects"]]


def print_frame(npy):
    desc = ("videotestsrc num-buffers=1 ! video/x-raw,format=GRAY8,"
            "width=%d,height=%d,framerate=30/1 ! tensorinject location=%s "
            "! cudanms %s ! fakesink" % (W, H, npy, NMS))
    rc, out = run([PRINT, "--json", desc])
    assert rc == 0, out
    frames = json_lines(out)
    assert len(frames) == 1, out
    want = [(b, round(s, 6), kp) for b, s, kp in KEPT]
    assert frame_objects(frames[0]) == want, (frame_objects(frames[0]), want)
    print("cudanms-print --json: a strict line, exact")
    return frames[0]


def meta_frame():
    pipeline, src, sink = gray_pipeline(W, H, NMS)
    buf = gray_frame(W, H, 0)
    attach_tensor(buf, TENSOR)
    src.emit("push-buffer", buf)
    out = sink.emit("pull-sample").get_buffer()
    line = frame_json(out.pts, W, H, detections(out))
    pipeline.set_state(Gst.State.NULL)
    frame = strict_json(line)
    print("frame_json(): a strict line")
    return frame


def every_field():
    """NaN and infinities in every kind of float field: null each."""
    obj = {"region_id": 0, "roi_type": "x", "x": 0, "y": 0, "w": 1, "h": 1,
           "detection": {
               "bounding_box": {"x_min": NAN, "y_min": INF, "x_max": -INF,
                                "y_max": 0.5},
               "confidence": NAN, "label_id": 0, "label": "x",
               "oriented_box": {"cx": INF, "cy": 1.0, "width": NAN,
                                "height": 2.0, "angle": -INF},
               "lane": {"points": [[NAN, 1.0], (2.0, INF)]},
               "keypoints": {"points": [[NAN, INF, -INF]]}}}
    got = strict_json(frame_json(0, 1, 1, [obj]))["objects"][0]["detection"]
    assert got == {
        "bounding_box": {"x_min": None, "y_min": None, "x_max": None,
                         "y_max": 0.5},
        "confidence": None, "label_id": 0, "label": "x",
        "oriented_box": {"cx": None, "cy": 1.0, "width": None,
                         "height": 2.0, "angle": None},
        "lane": {"points": [[None, 1.0], [2.0, None]]},
        "keypoints": {"points": [[None, None, None]]}}, got
    print("frame_json(): NaN and infinities in every field are null")


def main():
    Gst.init(None)
    check_strict_parser()
    with tempfile.TemporaryDirectory() as tmp:
        npy = os.path.join(tmp, "pose.npy")
        np.save(npy, TENSOR)
        tool_lines(npy)
        printed = print_frame(npy)
    from_meta = meta_frame()
    assert printed == from_meta, (printed, from_meta)
    every_field()
    print("OK: cudanms-tool, cudanms-print --json and frame_json() write "
          "strict JSON, NaN and infinite keypoints as null")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The tensor contract from Python (gi): appsrc ! cudanms ! appsink.

On GStreamer 1.22, CustomMeta.get_structure() returns a copy in Python, so
Python attaches the CudanmsTensorMeta structure through a protection meta,
which cudanms reads exactly like the custom meta. Exits 77 (skip) without gi.
"""
import math
import os
import struct
import sys

try:
    import gi
    gi.require_version("Gst", "1.0")
    gi.require_version("GstVideo", "1.0")
    from gi.repository import Gst, GstVideo
except (ImportError, ValueError) as e:
    print("SKIP: no gi/Gst:", e)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from gray_appsrc import gray_frame, gray_pipeline  # noqa: E402


def attach_tensor(buf, tensor_id, data_type, dims, payload):
    """The README's Python snippet."""
    s = Gst.Structure.new_empty("CudanmsTensorMeta")
    s.set_value("id", tensor_id)
    s.set_value("data-type", data_type)          # "float32" or "float16"
    s.set_value("dims", dims)                    # Gst.ValueArray or "1,7,10"
    s.set_value("dims-order", "row-major")
    s.set_value("data", Gst.Buffer.new_wrapped(payload))
    buf.add_protection_meta(s)


def hand_tensor():
    # yolov8 [1, 7, 10]: anchors (cx, cy, w, h, class, score); see
    # tests/common/gst_helpers.c
    anchors = [(100, 100, 40, 40, 0, .875), (102, 101, 40, 40, 0, .75),
               (101, 100, 40, 40, 1, .625), (200, 150, 20, 30, 2, .5),
               (50, 50, 10, 10, 0, .25), (300, 200, 50, 100, 1, .375),
               (10.5, 20.25, 5, 4, 2, .3125)]
    n = 10
    t = [0.0] * (7 * n)
    for a, (cx, cy, w, h, c, s) in enumerate(anchors):
        for ch, v in enumerate((cx, cy, w, h)):
            t[ch * n + a] = v
        t[(4 + c) * n + a] = s
    return struct.pack("<%df" % len(t), *t)


EXPECTED = [  # x, y, w, h, label_id, confidence, x1, y1, x2, y2
    (80, 80, 40, 40, 0, .875, 80, 80, 120, 120),
    (81, 80, 40, 40, 1, .625, 81, 80, 121, 120),
    (190, 135, 20, 30, 2, .5, 190, 135, 210, 165),
    (275, 150, 45, 90, 1, .375, 275, 150, 320, 240),
    (8, 18, 5, 5, 2, .3125, 8, 18.25, 13, 22.25),
]


def run(dims):
    pipeline, src, sink = gray_pipeline(
        320, 240, "model-size=320x240 tensor-id=detections")
    buf = gray_frame(320, 240, 0)
    attach_tensor(buf, "detections", "float32", dims, hand_tensor())
    src.emit("push-buffer", buf)
    src.emit("end-of-stream")
    sample = sink.emit("pull-sample")
    assert sample is not None, "no output buffer"
    out = sample.get_buffer()
    nms = [e for e in pipeline.iterate_elements()
           if e.get_factory().get_name() == "cudanms"]
    assert len(nms) == 1, nms
    producer = nms[0].get_name()

    rois = {}
    for i in range(len(EXPECTED)):
        m = GstVideo.buffer_get_video_region_of_interest_meta_id(out, i)
        assert m is not None, "no ROI with id %d" % i
        rois[i] = m
    assert GstVideo.buffer_get_video_region_of_interest_meta_id(
        out, len(EXPECTED)) is None, "too many ROIs"
    for i, (x, y, w, h, lid, conf, x1, y1, x2, y2) in enumerate(EXPECTED):
        m = rois[i]
        got = (m.x, m.y, m.w, m.h, GLib_quark_to_string(m.roi_type))
        assert got == (x, y, w, h, "class-%d" % lid), (i, got)
        s = m.get_param("detection")
        assert s is not None
        assert s.n_fields() == 8, s.to_string()
        assert s.get_value("producer") == producer, s.to_string()
        assert s.get_value("label_id") == lid
        assert s.get_value("label") == "class-%d" % lid
        assert s.get_value("confidence") == conf
        for key, v, size in (("x_min", x1, 320), ("y_min", y1, 240),
                             ("x_max", x2, 320), ("y_max", y2, 240)):
            assert math.isclose(s.get_value(key), v / size, rel_tol=0,
                                 abs_tol=1e-12), (i, key, s.get_value(key))
    pipeline.set_state(Gst.State.NULL)


def GLib_quark_to_string(q):
    from gi.repository import GLib
    return GLib.quark_to_string(q)


def main():
    Gst.init(None)
    if Gst.ElementFactory.find("cudanms") is None:
        print("FAIL: cudanms plugin not found")
        return 1
    run(Gst.ValueArray([1, 7, 10]))
    run("1,7,10")
    print("OK: Python-attached tensors give the exact ROIs")
    return 0


if __name__ == "__main__":
    sys.exit(main())

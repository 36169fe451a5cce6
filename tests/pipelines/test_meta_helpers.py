#!/usr/bin/python3
"""pipelines/python/cudanms_meta.py's attach_tensor() and detections()
through appsrc ! cudanms ! appsink: a [1, 0, 6] end2end result (an empty
array, which Gst.Buffer.new_wrapped(b'') would turn into GStreamer-CRITICALs)
passes with no detection and no critical; a one-row end2end tensor gives
its exact box. Two cudanms in a row (tensor-id a and b): detections()
returns every ROI of both, ids unique, each naming its producer, and
producer= keeps one element's; behind ROIs of another element (ids 0 and
7 attached by the app, no "detection" structure) cudanms's ids start at 8 and detections()
still finds them; frame_text() and frame_json() name the producers.
Criticals are fatal here: the test runs itself again with
G_DEBUG=fatal-criticals (GLib reads it when it loads)."""
import json
import os
import subprocess
import sys

if os.environ.get("G_DEBUG") != "fatal-criticals":
    sys.exit(subprocess.run(
        [sys.executable] + sys.argv,
        env=dict(os.environ, G_DEBUG="fatal-criticals")).returncode)

from common import PIPELINES, need  # noqa: E402

need("numpy", "gi")
sys.path.insert(0, os.path.join(PIPELINES, "python"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
import numpy as np  # noqa: E402
from cudanms_meta import (Gst, GstVideo, attach_tensor, detections,  # noqa: E402
                          frame_json, frame_text)
from gray_appsrc import gray_frame, gray_pipeline  # noqa: E402


def run(arrays):
    pipeline, src, sink = gray_pipeline(
        64, 48, "model-size=64x48 letterbox=false")
    bus = pipeline.get_bus()
    out = []
    for k, a in enumerate(arrays):
        buf = gray_frame(64, 48, k)
        attach_tensor(buf, a)
        src.emit("push-buffer", buf)
        out.append(detections(sink.emit("pull-sample").get_buffer()))
    warnings = []
    while True:
        msg = bus.pop_filtered(Gst.MessageType.WARNING | Gst.MessageType.ERROR)
        if msg is None:
            break
        warnings.append(msg.parse_warning()[0].message
                        if msg.type == Gst.MessageType.WARNING
                        else "error: " + msg.parse_error()[0].message)
    pipeline.set_state(Gst.State.NULL)
    return out, warnings


A_ROWS = np.array([[[8, 4, 24, 20, 0.75, 3]]], np.float32)
B_ROWS = np.array([[[30, 10, 40, 30, 0.5, 1], [2, 2, 12, 12, 0.875, 0]]],
                  np.float32)


def obj(rid, x, y, w, h, lid, conf, producer):
    """One expected detection of a 64x48 frame, labels class-<id>."""
    return {
        "region_id": rid, "roi_type": "class-%d" % lid,
        "x": x, "y": y, "w": w, "h": h,
        "detection": {
            "bounding_box": {"x_min": round(x / 64, 6),
                             "y_min": round(y / 48, 6),
                             "x_max": round((x + w) / 64, 6),
                             "y_max": round((y + h) / 48, 6)},
            "confidence": conf, "label_id": lid,
            "label": "class-%d" % lid, "producer": producer}}


def two_producers(upstream_ids):
    """appsrc ! cudanms a ! cudanms b ! appsink, one frame with tensors "ta"
    and "tb" and ROIs of upstream_ids attached by the app (no "detection"
    structure): the output buffer."""
    props = "model-size=64x48 letterbox=false"
    pipeline = Gst.parse_launch(
        "appsrc name=src format=time caps=video/x-raw,format=GRAY8,"
        "width=64,height=48,framerate=30/1 "
        "! cudanms name=a tensor-id=ta %s ! cudanms name=b tensor-id=tb %s "
        "! appsink name=sink sync=false" % (props, props))
    src, sink = pipeline.get_by_name("src"), pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    buf = gray_frame(64, 48, 0)
    for rid in upstream_ids:
        m = GstVideo.buffer_add_video_region_of_interest_meta(
            buf, "upstream", 1, 2, 3, 4)
        m.id = rid
    attach_tensor(buf, A_ROWS, tensor_id="ta")
    attach_tensor(buf, B_ROWS, tensor_id="tb")
    src.emit("push-buffer", buf)
    out = sink.emit("pull-sample").get_buffer()
    pipeline.set_state(Gst.State.NULL)
    return out


def check_two_producers():
    for first, upstream in ((0, []), (8, [0, 7])):
        out = two_producers(upstream)
        a = [obj(first, 8, 4, 16, 16, 3, 0.75, "a")]
        b = [obj(first + 1, 2, 2, 10, 10, 0, 0.875, "b"),
             obj(first + 2, 30, 10, 10, 20, 1, 0.5, "b")]
        got = detections(out)
        assert got == a + b, (upstream, got)
        # the app's ROIs are still there, left out of detections()
        assert out.get_n_meta(GstVideo.VideoRegionOfInterestMeta.get_info()
                              .api) == 3 + len(upstream), upstream
        assert detections(out, producer="a") == a, upstream
        assert detections(out, producer="b") == b, upstream
        assert detections(out, producer="c") == [], upstream
        text = frame_text(0, out.pts, got).splitlines()
        assert text == [
            "frame 0    pts 0:00:00.000000000  3 detections",
            "  #%-3d class-3        0.750  x=8     y=4     w=16    h=16     a"
            % first,
            "  #%-3d class-0        0.875  x=2     y=2     w=10    h=10     b"
            % (first + 1),
            "  #%-3d class-1        0.500  x=30    y=10    w=10    h=20     b"
            % (first + 2)], (upstream, text)
        # one producer: no suffix
        assert frame_text(0, out.pts, b).splitlines()[1:] == [
            "  #%-3d class-0        0.875  x=2     y=2     w=10    h=10   "
            % (first + 1),
            "  #%-3d class-1        0.500  x=30    y=10    w=10    h=20   "
            % (first + 2)], upstream
        line = json.loads(frame_json(out.pts, 64, 48, got))
        assert [o["detection"]["producer"] for o in line["objects"]] == [
            "a", "b", "b"], line
    # ROIs far apart: another element's ids need not be dense
    out = two_producers([5000])
    got = detections(out)
    assert [o["region_id"] for o in got] == [5001, 5002, 5003], got
    # ROIs left at GStreamer's default id 0: cudanms's follow from 1
    out = two_producers([0, 0, 0])
    got = detections(out)
    assert [(o["region_id"], o["detection"]["producer"]) for o in got] == [
        (1, "a"), (2, "b"), (3, "b")], got


class _NoMetaIds:
    """Stands in for cudanms_meta's reader of meta ids where ctypes cannot
    reach GStreamer: detections() then walks the ids."""
    ok = False

    def ids(self, buf):
        return None


def main():
    Gst.init(None)
    import cudanms_meta
    check_two_producers()
    assert cudanms_meta._meta_ids.ok, "the meta ids were not read by ctypes"
    # the same answers from the id walk
    kept = cudanms_meta._meta_ids
    cudanms_meta._meta_ids = _NoMetaIds()
    check_two_producers()
    cudanms_meta._meta_ids = kept
    print("OK: detections() returns both producers' ROIs (metas read in "
          "order, and by the id walk), producer= filters, frame_text() "
          "names them")
    empty = np.zeros((1, 0, 6), np.float32)
    one = np.array([[[8, 4, 24, 20, 0.75, 3]]], np.float32)
    out, warnings = run([empty, one, empty.astype(np.float16)])
    assert warnings == [], warnings
    assert out[0] == [] and out[2] == [], out
    assert len(out[1]) == 1, out[1]
    d = out[1][0]
    assert (d["x"], d["y"], d["w"], d["h"], d["roi_type"]) == (
        8, 4, 16, 16, "class-3"), d
    assert d["detection"]["confidence"] == 0.75, d
    assert d["detection"]["label_id"] == 3, d
    print("OK: attach_tensor() of an empty array passes cleanly; one row "
          "gives its exact box")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""pipelines/python/cudanms_meta.py's attach_tensor() and detections()
through appsrc ! cudanms ! appsink: a [1, 0, 6] end2end result (an empty
array, which Gst.Buffer.new_wrapped(b'') would turn into GStreamer-CRITICALs)
passes with no detection and no critical; a one-row end2end tensor gives
its exact box. Criticals are fatal here: the test runs itself again with
G_DEBUG=fatal-criticals (GLib reads it when it loads)."""
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
from cudanms_meta import Gst, attach_tensor, detections  # noqa: E402
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


def main():
    Gst.init(None)
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

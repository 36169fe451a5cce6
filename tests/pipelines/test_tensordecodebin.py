#!/usr/bin/python3
"""cudanms-print with GStreamer 1.28's tensordecodebin: the decoder that
the bin makes at caps time (cudanmstensordec, a cudanms) is found and
printed, the same objects as a cudanms element in its place prints
(tensorinject describing its yolo-v8-out tensor in the caps, model size
= the frame). A pipeline with neither a cudanms nor a tensordecodebin is
still refused. Exit 77 (skip) without GStreamer >= 1.28, tensordecodebin
or cudanmstensordec."""
import sys

from common import PRINT, json_lines, need, run

need("gi")
import gi  # noqa: E402

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

SRC = ("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=320,"
       "height=240,framerate=30/1 ! tensorinject tensor-id=yolo-v8-out "
       "model-size=320x240 seed=3 num-objects=3 noise=0")


def objects(frames):
    """Each frame's objects without the producer's name."""
    out = []
    for f in frames:
        objs = []
        for o in f["objects"]:
            d = dict(o["detection"])
            d.pop("producer", None)
            objs.append(dict(o, detection=d))
        out.append(dict(f, objects=objs))
    return out


def main():
    Gst.init(None)
    if Gst.version() < (1, 28, 0, 0):
        print("SKIP: GStreamer %s, tensordecodebin needs 1.28"
              % Gst.version_string())
        return 77
    for f in ("tensordecodebin", "cudanmstensordec", "tensorinject"):
        if Gst.ElementFactory.find(f) is None:
            print("SKIP: no %s" % f)
            return 77

    rc, out = run([PRINT, "--json", SRC + " ! tensordecodebin ! fakesink"])
    assert rc == 0, (rc, out)
    got = json_lines(out)
    rc, out = run([PRINT, "--json", SRC + " ! cudanms name=nms "
                   "model-size=320x240 letterbox=false ! fakesink"])
    assert rc == 0, (rc, out)
    want = json_lines(out)
    assert len(got) == 2 and len(want) == 2, (got, want)
    n = sum(len(f["objects"]) for f in want)
    assert n > 0, want
    for f in got:
        for o in f["objects"]:
            assert o["detection"]["producer"].startswith("cudanmstensordec"), o
    assert objects(got) == objects(want), (got, want)

    rc, out = run([PRINT, SRC + " ! tensordecodebin ! fakesink"])
    assert rc == 0, (rc, out)
    assert out.splitlines()[-1] == "2 frames, %d detections" % n, out

    rc, out = run([PRINT, SRC + " ! fakesink"])
    assert rc == 2, (rc, out)
    print("OK: cudanms-print prints tensordecodebin's cudanmstensordec, "
          "%d objects in 2 frames as cudanms's" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())

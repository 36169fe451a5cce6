#!/usr/bin/python3
"""cudanms-print on a pipeline of two cudanms (first, then nms with
score-threshold=0.6) over the known scene: every frame holds both
elements' ROIs, ids 0..3 for first's and 4..5 for nms's; the text output
names each ROI's producer at the end of its line (the frame's ROIs come
from more than one), the JSON names it in "detection"."""
import os
import sys
import tempfile

from common import (LABELS, PIPELINES, PRINT, check_frame, json_lines,
                    known_expected, need, run)

need("numpy")
FRAMES = 3


def pipeline(npy):
    labels = "label-file=" + os.path.join(PIPELINES, "coco.names")
    return ["videotestsrc", "num-buffers=%d" % FRAMES, "!",
            "video/x-raw,width=640,height=480,framerate=30/1", "!",
            "tensorinject", "location=%s" % os.path.join(npy, "frame-%d.npy"),
            "!", "cudanms", "name=first", "model-size=640x640", labels, "!",
            "cudanms", "name=nms", "model-size=640x640", labels,
            "score-threshold=0.6", "!", "fakesink"]


def text_line(rid, e, producer):
    x, y, w, h, lid, conf = e[:6]
    return "  #%-3d %-14s %.3f  x=%-5u y=%-5u w=%-5u h=%-5u  %s" % (
        rid, LABELS[lid], conf, x, y, w, h, producer)


def main():
    with tempfile.TemporaryDirectory() as npy:
        rc, _ = run(["/usr/bin/python3",
                     os.path.join(PIPELINES, "python", "known_scene.py"),
                     npy, str(FRAMES)])
        assert rc == 0

        rc, out = run([PRINT] + pipeline(npy))
        assert rc == 0, rc
        want = []
        for k in range(FRAMES):
            first = known_expected(k)
            nms = [e for e in first if e[5] > 0.6]
            assert len(first) == 4 and len(nms) == 2
            want.append("frame %-4d pts 0:00:00.%09d  6 detections"
                        % (k, k * 1000000000 // 30))
            want += [text_line(i, e, "first") for i, e in enumerate(first)]
            want += [text_line(4 + i, e, "nms") for i, e in enumerate(nms)]
        want.append("%d frames, %d detections" % (FRAMES, 6 * FRAMES))
        assert out.splitlines() == want, (out, want)

        rc, out = run([PRINT, "--json"] + pipeline(npy))
        assert rc == 0, rc
        frames = json_lines(out)
        assert len(frames) == FRAMES, out
        for k, frame in enumerate(frames):
            first = known_expected(k)
            nms = [e for e in first if e[5] > 0.6]
            objs = frame["objects"]
            assert len(objs) == 6, objs
            check_frame(dict(frame, objects=objs[:4]), k * 1000000000 // 30,
                        640, 480, first, "first")
            check_frame(dict(frame, objects=objs[4:]), k * 1000000000 // 30,
                        640, 480, nms, "nms", first_id=4)
    print("OK: cudanms-print names each ROI's producer when two cudanms "
          "attach ROIs to a frame")
    return 0


if __name__ == "__main__":
    sys.exit(main())

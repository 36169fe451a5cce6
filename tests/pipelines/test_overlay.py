#!/usr/bin/python3
"""pipelines/python/overlay.py (the visual demo) and cudanms-print --json on
the seeded synthetic scene of tensorinject.

The expectation is computed independently: the test takes the very tensors
tensorinject attaches (same seed, same frames) and runs the NumPy reference
(nms_ref.py) on them. Both apps' JSON lines must match it, and the PNG
frames and the contact sheet must exist with the right pixel size."""
import os
import sys
import tempfile

from common import (PIPELINES, PRINT, check_frame, json_lines, need,
                    png_size, run)

need("numpy", "gi", "cairo", "gi-cairo")

import numpy as np  # noqa: E402
import gi  # noqa: E402
gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402
from nms_ref import reference  # noqa: E402

FRAMES, WIDTH, HEIGHT, SEED, THRESHOLD = 6, 640, 360, 7, "0.3"
SRC = ("videotestsrc num-buffers=%d ! video/x-raw,width=%d,height=%d,"
       "framerate=30/1 ! tensorinject seed=%d" % (FRAMES, WIDTH, HEIGHT, SEED))


def synthetic_tensors():
    """The tensors tensorinject attaches, read back from its custom meta."""
    pipeline = Gst.parse_launch(SRC + " ! appsink name=sink sync=false")
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    out = []
    for _ in range(FRAMES):
        buf = sink.emit("pull-sample").get_buffer()
        s = buf.get_custom_meta("CudanmsTensorMeta").get_structure()
        assert s.get_value("data-type") == "float32"
        dims = [int(d) for d in s.get_value("dims")]
        ok, info = s.get_value("data").map(Gst.MapFlags.READ)
        assert ok
        out.append((buf.pts, np.frombuffer(info.data, np.float32)
                    .reshape(dims).copy()))
    pipeline.set_state(Gst.State.NULL)
    return out


def check_json(frames, expected, producer):
    assert len(frames) == FRAMES, len(frames)
    for frame, (pts, exp) in zip(frames, expected):
        check_frame(frame, pts, WIDTH, HEIGHT, exp, producer)


def main():
    Gst.init(None)
    expected = []
    for pts, tensor in synthetic_tensors():
        exp, n_candidates = reference(tensor, WIDTH, HEIGHT,
                                      score_threshold=float(THRESHOLD))
        # The scene must give NMS real work, else the test proves little.
        assert 4 <= len(exp) < n_candidates, (len(exp), n_candidates)
        expected.append((pts, exp))

    with tempfile.TemporaryDirectory() as out:
        rc, text = run(["/usr/bin/python3",
                        os.path.join(PIPELINES, "python", "overlay.py"),
                        "--out", out, "--frames", str(FRAMES), "--width",
                        str(WIDTH), "--height", str(HEIGHT), "--seed",
                        str(SEED), "--score-threshold", THRESHOLD])
        assert rc == 0, rc
        assert "contact-sheet.png" in text, text
        with open(os.path.join(out, "detections.jsonl")) as f:
            check_json(json_lines(f.read()), expected, "cudanms0")
        for k in range(FRAMES):
            assert png_size(os.path.join(out, "frame-%05d.png" % k)) == \
                (WIDTH, HEIGHT), k
        assert not os.path.exists(os.path.join(out, "frame-%05d.png" % FRAMES))
        # 3 x 2 tiles at half size with 8-pixel gaps.
        assert png_size(os.path.join(out, "contact-sheet.png")) == \
            (3 * WIDTH // 2 + 4 * 8, 2 * HEIGHT // 2 + 3 * 8)

    rc, text = run([PRINT, "--json"] + SRC.split() + [
        "!", "cudanms", "name=nms", "score-threshold=" + THRESHOLD,
        "label-file=" + os.path.join(PIPELINES, "coco.names"),
        "!", "fakesink"])
    assert rc == 0, rc
    check_json(json_lines(text), expected, "nms")
    print("OK: overlay.py and cudanms-print match the NumPy reference on "
          "the seeded scene; PNG sizes right")
    return 0


if __name__ == "__main__":
    sys.exit(main())

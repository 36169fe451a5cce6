#!/usr/bin/python3
"""pipelines/batch-demo.sh (GStreamer >= 1.28), as the docs run it: four
streams of four frame sizes batched by tensorbatch, decoded by one cudanms,
split by tensorunbatch and drawn. Each stream's PNG frames exist at its
size, one a frame; its JSON lines (the detections each frame carried out
of tensorunbatch) are exactly cudanms-print --json's lines of that stream
run alone through cudanms (same frames, order, timestamps, boxes,
scores, labels and frame size); the contact sheet is 2x2 cells. Exits 77
(skip) below GStreamer 1.28 or without gi's cairo."""
import os
import sys
import tempfile

from common import (BUILD, PIPELINES, PRINT, json_lines, need, png_size,
                    run)

need("numpy", "gi", "gi-cairo")
sys.path.insert(0, os.path.join(PIPELINES, "python"))
from batch_demo import (CELL_H, CELL_W, GAP, STREAMS,  # noqa: E402
                        single_description)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "batch")
        rc, log = run(["sh", os.path.join(PIPELINES, "batch-demo.sh"), BUILD,
                       out])
        print(log, end="")
        if rc == 77:
            return 77
        assert rc == 0, rc
        total = 0
        for i, (w, h, _seed, frames) in enumerate(STREAMS):
            pngs = sorted(f for f in os.listdir(out)
                          if f.startswith("stream%d-frame-" % i))
            assert pngs == ["stream%d-frame-%05d.png" % (i, k)
                            for k in range(frames)], pngs
            for p in pngs:
                assert png_size(os.path.join(out, p)) == (w, h), p
            with open(os.path.join(out, "stream%d-detections.jsonl" % i)) as f:
                got = json_lines(f.read())
            rc, printed = run([PRINT, "--json", single_description(i)])
            assert rc == 0, printed
            want = json_lines(printed)
            assert len(want) == frames, (i, len(want))
            assert got == want, (i, got, want)
            n = sum(len(fr["objects"]) for fr in got)
            # every frame of the scene has boxes above 0.3
            assert all(fr["objects"] for fr in got), i
            assert ("batch-demo: stream %d (%dx%d): %d frames, %d detections"
                    % (i, w, h, frames, n)) in log, log
            print("stream %d (%dx%d): %d frames, %d detections, exactly a "
                  "single-stream run's" % (i, w, h, frames, n))
            total += n
        sheet = os.path.join(out, "batch-contact-sheet.png")
        assert png_size(sheet) == (2 * CELL_W + 3 * GAP,
                                   2 * CELL_H + 3 * GAP), png_size(sheet)
        assert "batch-demo: contact sheet %s (%dx%d)" % (
            sheet, 2 * CELL_W + 3 * GAP, 2 * CELL_H + 3 * GAP) in log, log
    print("OK: batch-demo.sh's %d streams (%d detections) are their "
          "single-stream runs', drawn, with the contact sheet"
          % (len(STREAMS), total))
    return 0


if __name__ == "__main__":
    sys.exit(main())

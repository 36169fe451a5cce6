#!/usr/bin/python3
"""pipelines/python/appsrc_numpy.py: NumPy tensors in through appsrc, ROIs
out of appsink. Exits 0; text and JSON hold the known scene's exact
detections."""
import os
import sys

from common import PIPELINES, check_frame, json_lines, known_expected, need, run

need("numpy", "gi")
APP = ["/usr/bin/python3", os.path.join(PIPELINES, "python", "appsrc_numpy.py")]


def main():
    rc, out = run(APP + ["--frames", "4", "--json"])
    assert rc == 0, rc
    frames = json_lines(out)
    assert len(frames) == 4, out
    for k, frame in enumerate(frames):
        check_frame(frame, k * 1000000000 // 30, 640, 480, known_expected(k),
                    "cudanms0")

    rc, out = run(APP + ["--frames", "2"])
    assert rc == 0, rc
    lines = out.splitlines()
    assert lines[-1] == "2 frames, 8 detections", lines[-1]
    assert lines[0].endswith("  4 detections"), lines[0]
    print("OK: appsrc_numpy.py prints the known scene's exact detections")
    return 0


if __name__ == "__main__":
    sys.exit(main())

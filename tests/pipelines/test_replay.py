#!/usr/bin/python3
"""pipelines/replay.sh and the C app cudanms-print on the known scene:
.npy tensors written by known_scene.py, replayed by tensorinject
location=%d. The JSON must hold the exact detections worked out by hand,
and the library CLI (cudanms-tool decode, no GStreamer) must agree.
cudanms-print's exit codes: 0 on EOS, 1 on a pipeline error, 2 on misuse
(bad option, no cudanms, a misspelt property)."""
import json
import os
import sys
import tempfile

from common import (PIPELINES, PRINT, TOOL, BUILD, check_frame, json_lines,
                    known_expected, need, run)

need("numpy")
FRAMES = 3


def main():
    with tempfile.TemporaryDirectory() as npy:
        rc, _ = run(["/usr/bin/python3",
                     os.path.join(PIPELINES, "python", "known_scene.py"),
                     npy, str(FRAMES)])
        assert rc == 0
        replay = ["sh", os.path.join(PIPELINES, "replay.sh")]

        rc, out = run(replay + ["--json", BUILD, npy])
        assert rc == 0, rc
        frames = json_lines(out)
        assert len(frames) == FRAMES, out
        for k, frame in enumerate(frames):
            check_frame(frame, k * 1000000000 // 30, 640, 480,
                        known_expected(k), "nms")
            rc, tool = run([TOOL, "decode", "--tensor",
                            os.path.join(npy, "frame-%d.npy" % k),
                            "--model-size", "640x640", "--frame-size",
                            "640x480", "--letterbox", "--score-threshold",
                            "0.25", "--iou", "0.45"])
            assert rc == 0
            want = [(d["x"], d["y"], d["w"], d["h"], d["label_id"],
                     d["confidence"]) for d in json_lines(tool)]
            got = [(o["x"], o["y"], o["w"], o["h"],
                    o["detection"]["label_id"], o["detection"]["confidence"])
                   for o in frame["objects"]]
            assert got == want, (k, got, want)

        rc, out = run(replay + [BUILD, npy])
        assert rc == 0, rc
        lines = out.splitlines()
        assert lines[-1] == "3 frames, 12 detections", lines[-1]
        assert lines[0].endswith("  4 detections"), lines[0]
        assert lines[1].split() == ["#0", "person", "0.875", "x=120", "y=60",
                                    "w=80", "h=200"], lines[1]

    # A missing tensor file is a pipeline error: exit 1, no frame printed.
    rc, out = run([PRINT, "--json", "videotestsrc", "num-buffers=2", "!",
                   "tensorinject", "location=/nonexistent/frame-%d.npy", "!",
                   "cudanms", "!", "fakesink"], stderr=open(os.devnull, "w"))
    assert rc == 1 and out == "", (rc, out)
    rc, _ = run([PRINT, "videotestsrc", "!", "fakesink"],
                stderr=open(os.devnull, "w"))
    assert rc == 2, rc
    rc, _ = run([PRINT, "--bogus", "fakesrc", "!", "fakesink"],
                stderr=open(os.devnull, "w"))
    assert rc == 2, rc
    rc, out = run([PRINT, "videotestsrc", "num-buffers=1", "!", "tensorinject",
                   "!", "cudanms", "scor-threshold=0.3", "!", "fakesink"],
                  stderr=open(os.devnull, "w"))
    assert rc == 2 and out == "", (rc, out)
    print("OK: replay.sh and cudanms-print give the known scene's exact "
          "detections")
    return 0


if __name__ == "__main__":
    sys.exit(main())

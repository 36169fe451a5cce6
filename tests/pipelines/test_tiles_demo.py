#!/usr/bin/python3
"""pipelines/tiles-demo.sh, as the docs run it: a 3840x2160 frame of 150
small objects cut into 33 slices by tensorinject, merged by cudanms
slice-size=640x640, beside one 640x640 pass of the whole frame. Every
object is found once by the slices (150 distinct boxes, each inside the
frame), the single pass finds fewer (the small objects are missing from
the whole frame's tensor); both PNGs are the frame's size, the JSON holds
both lists as cudanms-print --json lays a frame out, and the contact sheet
has the size the demo prints."""
import json
import os
import sys
import tempfile

from common import BUILD, PIPELINES, need, png_size, run

need("gi", "gi-cairo")
sys.path.insert(0, os.path.join(PIPELINES, "python"))
from tiles_demo import H, OBJECTS, W  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "tiles")
        rc, log = run(["sh", os.path.join(PIPELINES, "tiles-demo.sh"), BUILD,
                       out])
        print(log, end="")
        assert rc == 0, rc
        for name in ("tiles.png", "single.png"):
            assert png_size(os.path.join(out, name)) == (W, H), name
        with open(os.path.join(out, "tiles-detections.json")) as f:
            found = json.load(f)
        tiles = found["tiles"]["objects"]
        single = found["single"]["objects"]
        assert found["tiles"]["resolution"] == {"width": W, "height": H}
        boxes = {(o["x"], o["y"], o["w"], o["h"]) for o in tiles}
        assert len(tiles) == OBJECTS and len(boxes) == OBJECTS, len(tiles)
        assert all(0 <= x and 0 <= y and x + w <= W and y + h <= H
                   for x, y, w, h in boxes)
        assert 0 < len(single) < OBJECTS, len(single)
        assert ("tiles-demo: %d objects in a %dx%d frame; 33 slices merged: "
                "%d detections" % (OBJECTS, W, H, len(tiles))) in log, log
        assert "one 640x640 pass: %d detections" % len(single) in log, log
        sheet = os.path.join(out, "tiles-contact-sheet.png")
        w, h = png_size(sheet)
        assert "tiles-demo: contact sheet %s (%dx%d)" % (sheet, w, h) in log
    print("OK: tiles-demo.sh found the %d objects in 33 slices, %d in one "
          "pass" % (OBJECTS, len(single)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

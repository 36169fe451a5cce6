#!/usr/bin/python3
"""The tiles demo: small objects in a 4K frame, found by sliced inference
and merged by cudanms, beside what one pass at the model's size finds.

  videotestsrc ! video/x-raw,width=3840,height=2160
    ! tensorinject slice-size=640x640 num-objects=150 draw-objects=true
    ! tee name=t
  t. ! queue ! cudanms slice-size=640x640 ! cairooverlay ! ... tiles.png
  t. ! queue ! cudanms tensor-id=tiles-whole-frame ! cairooverlay
     ! ... single.png

tensorinject (the stand-in for a slicer and a detector) paints 150 small
objects (12 to 60 pixels) into the frame and attaches two tensors: the
YOLOv8 outputs of the frame's 33 slices (SAHI's grid of 640x640 slices
overlapping by 0.2, 8 x 4, then the whole frame), each holding the part of
every object inside the slice, and the whole frame's alone, where objects
under 8 model pixels (48 frame pixels) are missing, as a 640x640 pass at
1/6 scale misses them. The first cudanms merges the slices' detections as
SAHI does (greedy NMM, IoS 0.5, each class alone); the second reads the
whole frame's tensor as one frame. Writes, into --out:
  tiles.png              the frame with the merged boxes
  single.png             the frame with the one pass's boxes
  tiles-detections.json  both lists (cudanms-print --json layout)
  tiles-contact-sheet.png  both, side by side, with a zoomed corner
No GPU and no model. Needs GST_PLUGIN_PATH_1_0 to hold the cudanms and
tensorinject plugins and python3-gi-cairo.
"""
import argparse
import json
import os
import sys

import cairo
import gi

gi.require_foreign("cairo")
from cudanms_meta import Gst, detections, frame_json  # noqa: E402
from overlay import draw_detections  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = os.path.join(HERE, "..", "coco.names")
W, H = 3840, 2160
SLICE = 640
OBJECTS = 150
SEED = 7
NMS = "score-threshold=0.3 label-file=\"%s\"" % LABELS
# the contact sheet: two cells of the frame at CELL_W wide, a zoomed crop
# of ZOOM (x, y, w, h, frame pixels) under each
CELL_W = 960
ZOOM = (1600, 800, 640, 360)
GAP = 8


def description(out):
    return (
        "videotestsrc num-buffers=1 pattern=solid-color "
        "foreground-color=0xff1c2a38 "
        "! video/x-raw,format=BGRx,width=%d,height=%d,framerate=30/1 "
        "! tensorinject slice-size=%dx%d num-objects=%d seed=%d "
        "draw-objects=true ! tee name=t "
        "t. ! queue ! cudanms name=tiled slice-size=%dx%d %s "
        "! cairooverlay name=o_tiles ! videoconvert ! pngenc "
        "! filesink location=\"%s\" "
        "t. ! queue ! cudanms name=single tensor-id=tiles-whole-frame %s "
        "! cairooverlay name=o_single ! videoconvert ! pngenc "
        "! filesink location=\"%s\"" % (
            W, H, SLICE, SLICE, OBJECTS, SEED, SLICE, SLICE, NMS,
            os.path.join(out, "tiles.png"), NMS,
            os.path.join(out, "single.png")))


def contact_sheet(out, counts):
    scale = CELL_W / W
    cell_h = int(H * scale)
    zoom_h = int(ZOOM[3] * CELL_W / ZOOM[2])
    sheet = cairo.ImageSurface(cairo.FORMAT_RGB24, 2 * CELL_W + 3 * GAP,
                               cell_h + zoom_h + 3 * GAP + 2 * 26)
    cr = cairo.Context(sheet)
    cr.set_source_rgb(0.1, 0.1, 0.1)
    cr.paint()
    captions = ("cudanms slice-size=640x640: 33 slices merged, %d "
                "detections" % counts["tiles"],
                "one 640x640 pass of the whole frame: %d detections"
                % counts["single"])
    for i, name in enumerate(("tiles", "single")):
        png = cairo.ImageSurface.create_from_png(
            os.path.join(out, name + ".png"))
        x = GAP + i * (CELL_W + GAP)
        cr.save()
        cr.translate(x, GAP)
        cr.scale(scale, scale)
        cr.set_source_surface(png, 0, 0)
        cr.paint()
        cr.restore()
        # the zoomed region, outlined on the frame and drawn below it
        cr.set_source_rgb(1, 1, 1)
        cr.set_line_width(1)
        cr.rectangle(x + ZOOM[0] * scale, GAP + ZOOM[1] * scale,
                     ZOOM[2] * scale, ZOOM[3] * scale)
        cr.stroke()
        z = CELL_W / ZOOM[2]
        y0 = GAP + cell_h + GAP
        cr.save()
        cr.rectangle(x, y0, CELL_W, zoom_h)
        cr.clip()
        cr.translate(x - ZOOM[0] * z, y0 - ZOOM[1] * z)
        cr.scale(z, z)
        cr.set_source_surface(png, 0, 0)
        cr.paint()
        cr.restore()
        cr.set_source_rgb(1, 1, 1)
        cr.select_font_face("Sans", cairo.FONT_SLANT_NORMAL,
                            cairo.FONT_WEIGHT_BOLD)
        cr.set_font_size(15)
        cr.move_to(x + 4, y0 + zoom_h + 20)
        cr.show_text(captions[i])
    path = os.path.join(out, "tiles-contact-sheet.png")
    sheet.write_to_png(path)
    return path, sheet.get_width(), sheet.get_height()


def run(out):
    os.makedirs(out, exist_ok=True)
    pipeline = Gst.parse_launch(description(out))
    found = {}

    def on_buffer(_pad, info, name):
        buf = info.get_buffer()
        found[name] = (buf.pts, detections(buf))
        return Gst.PadProbeReturn.OK

    def on_draw(_overlay, cr, _pts, _duration, name):
        draw_detections(cr, found[name][1], W)

    for name in ("tiles", "single"):
        overlay = pipeline.get_by_name("o_" + name)
        overlay.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER,
                                                 on_buffer, name)
        overlay.connect("draw", on_draw, name)
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(
        Gst.CLOCK_TIME_NONE, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        print("tiles-demo: %s\n%s" % (err.message, dbg or ""),
              file=sys.stderr)
        return 1
    counts = {k: len(v[1]) for k, v in found.items()}
    with open(os.path.join(out, "tiles-detections.json"), "w") as f:
        json.dump({k: json.loads(frame_json(v[0], W, H, v[1]))
                   for k, v in found.items()}, f)
    print("tiles-demo: %d objects in a %dx%d frame; 33 slices merged: %d "
          "detections (%s); one 640x640 pass: %d detections (%s)" % (
              OBJECTS, W, H, counts["tiles"],
              os.path.join(out, "tiles.png"), counts["single"],
              os.path.join(out, "single.png")))
    path, w, h = contact_sheet(out, counts)
    print("tiles-demo: contact sheet %s (%dx%d)" % (path, w, h))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="tiles-demo-out")
    args = ap.parse_args()
    Gst.init(None)
    return run(args.out)


if __name__ == "__main__":
    sys.exit(main())

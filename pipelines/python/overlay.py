#!/usr/bin/python3
"""The visual demo: cudanms's ROIs drawn on the video with cairooverlay.

  videotestsrc ! tensorinject seed=7 draw-objects=true
    ! cudanms label-file=coco.names
    ! cairooverlay ! videoconvert ! pngenc ! multifilesink

tensorinject paints its scene's objects into the frames (a rectangle in a
darker shade of the class's box colour), so each box should sit on one.
A pad probe in front of cairooverlay reads each buffer's ROI metas (kept
order, id 0..n-1) and the 'draw' signal paints them. Writes, into --out:
  frame-00000.png ...   every annotated frame
  contact-sheet.png     a 3x2 grid of six of them, at half size
  detections.jsonl      one JSON line per frame (cudanms-print --json layout)
No GPU and no model: tensorinject renders a seeded synthetic scene.
Needs GST_PLUGIN_PATH_1_0 to hold the cudanms plugin, and python3-gi-cairo.
"""
import argparse
import colorsys
import os
import sys

import cairo
import gi

gi.require_foreign("cairo")
from cudanms_meta import Gst, detections, frame_json  # noqa: E402

LABELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "coco.names")
SHEET_COLS, SHEET_ROWS, SHEET_SCALE, SHEET_GAP = 3, 2, 0.5, 8


def label_color(label_id):
    """A bright colour per class: 11 hues, so neighbouring ids differ."""
    return colorsys.hsv_to_rgb((label_id % 11) / 11.0, 0.6, 1.0)


def overlaps(a, b):
    return (a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and
            a[1] < b[1] + b[3] and b[1] < a[1] + a[3])


def draw_detections(cr, objects, width):
    cr.set_line_width(3)
    cr.select_font_face("Sans", cairo.FONT_SLANT_NORMAL,
                        cairo.FONT_WEIGHT_BOLD)
    cr.set_font_size(18)
    for o in reversed(objects):  # lowest score first, the best end on top
        cr.set_source_rgb(*label_color(o["detection"]["label_id"]))
        cr.rectangle(o["x"] + 1.5, o["y"] + 1.5, max(o["w"] - 3, 1),
                     max(o["h"] - 3, 1))
        cr.stroke()

    # Labels in kept order; one that would cover a better one's label
    # moves down into its own box.
    placed = []
    for o in objects:
        det = o["detection"]
        text = "%s %.2f" % (det["label"], det["confidence"])
        tw, th = cr.text_extents(text).x_advance + 10, 24
        tx = min(o["x"], width - tw)
        ty = o["y"] - th if o["y"] >= th else o["y"]
        while any(overlaps((tx, ty, tw, th), p) for p in placed):
            ty += th
        placed.append((tx, ty, tw, th))
        cr.set_source_rgb(*label_color(det["label_id"]))
        cr.rectangle(tx, ty, tw, th)
        cr.fill()
        cr.set_source_rgb(0.05, 0.05, 0.05)
        cr.move_to(tx + 5, ty + 18)
        cr.show_text(text)


def contact_sheet(frames, path):
    """Lays the PNG frames out as a SHEET_COLS x SHEET_ROWS grid."""
    first = cairo.ImageSurface.create_from_png(frames[0][1])
    tw = int(first.get_width() * SHEET_SCALE)
    th = int(first.get_height() * SHEET_SCALE)
    sheet = cairo.ImageSurface(
        cairo.FORMAT_RGB24, SHEET_COLS * tw + (SHEET_COLS + 1) * SHEET_GAP,
        SHEET_ROWS * th + (SHEET_ROWS + 1) * SHEET_GAP)
    cr = cairo.Context(sheet)
    cr.set_source_rgb(0.1, 0.1, 0.1)
    cr.paint()
    for i, (index, png) in enumerate(frames):
        x = SHEET_GAP + (i % SHEET_COLS) * (tw + SHEET_GAP)
        y = SHEET_GAP + (i // SHEET_COLS) * (th + SHEET_GAP)
        cr.save()
        cr.translate(x, y)
        cr.scale(SHEET_SCALE, SHEET_SCALE)
        cr.set_source_surface(cairo.ImageSurface.create_from_png(png), 0, 0)
        cr.paint()
        cr.restore()
        cr.set_source_rgb(1, 1, 1)
        cr.select_font_face("Sans", cairo.FONT_SLANT_NORMAL,
                            cairo.FONT_WEIGHT_BOLD)
        cr.set_font_size(14)
        cr.move_to(x + 6, y + th - 8)
        cr.show_text("frame %d" % index)
    sheet.write_to_png(path)
    return sheet.get_width(), sheet.get_height()


def run(args):
    os.makedirs(args.out, exist_ok=True)
    pipeline = Gst.parse_launch(
        "videotestsrc num-buffers=%d pattern=solid-color "
        "foreground-color=0xff1c2a38 "
        "! video/x-raw,format=BGRx,width=%d,height=%d,framerate=30/1 "
        "! tensorinject seed=%d draw-objects=true "
        "! cudanms iou=0.45 score-threshold=%s label-file=\"%s\" "
        "! cairooverlay name=overlay ! videoconvert ! pngenc "
        "! multifilesink location=\"%s\"" % (
            args.frames, args.width, args.height, args.seed,
            args.score_threshold, LABELS,
            os.path.join(args.out, "frame-%05d.png")))
    overlay = pipeline.get_by_name("overlay")
    pending = {}
    jsonl = open(os.path.join(args.out, "detections.jsonl"), "w")

    def on_buffer(pad, info):
        buf = info.get_buffer()
        objects = detections(buf)
        pending[buf.pts] = objects
        jsonl.write(frame_json(buf.pts, args.width, args.height, objects)
                    + "\n")
        return Gst.PadProbeReturn.OK

    def on_draw(_overlay, cr, pts, _duration):
        draw_detections(cr, pending.pop(pts, []), args.width)

    overlay.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER,
                                             on_buffer)
    overlay.connect("draw", on_draw)

    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(
        Gst.CLOCK_TIME_NONE, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    jsonl.close()
    if msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        print("overlay: %s\n%s" % (err.message, dbg or ""), file=sys.stderr)
        return 1

    n = SHEET_COLS * SHEET_ROWS
    picks = sorted({round(i * (args.frames - 1) / max(n - 1, 1))
                    for i in range(n)})
    sheet = os.path.join(args.out, "contact-sheet.png")
    w, h = contact_sheet(
        [(i, os.path.join(args.out, "frame-%05d.png" % i)) for i in picks],
        sheet)
    print("overlay: %d annotated frames %s, contact sheet %s (%dx%d), "
          "detections %s" % (
              args.frames, os.path.join(args.out, "frame-*.png"), sheet, w, h,
              os.path.join(args.out, "detections.jsonl")))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="demo-out")
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    ap.add_argument("--seed", type=int, default=7)
    # 0.3: above the synthetic scene's background noise (0.05..0.30).
    ap.add_argument("--score-threshold", default="0.3")
    args = ap.parse_args()
    Gst.init(None)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

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
With --layout yolov8-obb the scene is a YOLOv8-OBB one (tensorinject
layout=yolov8-obb tensor-id=yolo-v8-obb-out num-classes=15: rotated, turning
objects, painted as rotated rectangles; the 15 DOTA labels of dota.names);
cudanms reads it as oriented boxes by the tensor id, each detection is
drawn as its rotated rectangle, and the files are named obb-frame-*.png,
obb-contact-sheet.png and obb-detections.jsonl.
With --layout laneatt the scene is a road (tensorinject layout=laneatt:
LaneATT lane proposals, model 640x360, its lanes painted as light yellow
markings); cudanms (model-size=640x360, no label file: each ROI is
labelled lane) keeps one proposal per lane, each kept lane is drawn as a
polyline through its points (the ROI's "lane" structure, frame pixels),
and the files are named lanes-frame-*.png, lanes-contact-sheet.png and
lanes-detections.jsonl (each object's detection with "lane": {"points":
[[x, y], ...]}, bottom row first).
With --layout yolov8-pose the scene is people (tensorinject
layout=yolov8-pose: COCO skeletons, painted as such); cudanms
layout=yolov8-pose keeps one box per person and each is drawn with its
COCO skeleton through its keypoints (the ROI's "keypoints" structure; a
keypoint scoring below 0.5 and its limbs left out): pose-frame-*.png,
pose-contact-sheet.png, pose-detections.jsonl. With --layout yolov8-seg
the scene is shapes (tensorinject layout=yolov8-seg: ellipses, rectangles
and diamonds encoded as prototypes and coefficients); cudanms
layout=yolov8-seg assembles each kept box's mask and each is filled at
half opacity (the ROI's "mask" structure): seg-frame-*.png,
seg-contact-sheet.png, seg-detections.jsonl.
No GPU and no model: tensorinject renders a seeded synthetic scene.
Needs GST_PLUGIN_PATH_1_0 to hold the cudanms plugin, and python3-gi-cairo.
"""
import argparse
import colorsys
import math
import os
import sys

import cairo
import gi

gi.require_foreign("cairo")
from cudanms_meta import Gst, detections, frame_json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SHEET_COLS, SHEET_ROWS, SHEET_SCALE, SHEET_GAP = 3, 2, 0.5, 8
LINE_WIDTH = 3
# layout: (tensorinject's properties, label file, file name prefix)
LAYOUTS = {
    "yolov8": ("", os.path.join(HERE, "..", "coco.names"), ""),
    "yolov8-obb": ("layout=yolov8-obb tensor-id=yolo-v8-obb-out "
                   "num-classes=15 ", os.path.join(HERE, "..", "dota.names"),
                   "obb-"),
    "laneatt": ("layout=laneatt ", None, "lanes-"),
    "yolov8-pose": ("layout=yolov8-pose ",
                    os.path.join(HERE, "..", "coco.names"), "pose-"),
    "yolov8-seg": ("layout=yolov8-seg ",
                   os.path.join(HERE, "..", "coco.names"), "seg-"),
}
# cudanms's own properties per layout, beyond the common ones
NMS_PROPS = {"laneatt": "model-size=640x360 ",
             "yolov8-pose": "layout=yolov8-pose ",
             "yolov8-seg": "layout=yolov8-seg "}
# COCO's skeleton: the keypoint pairs of its 19 limbs (ultralytics' order)
COCO_LIMBS = [(15, 13), (13, 11), (16, 14), (14, 12), (11, 12), (5, 11),
              (6, 12), (5, 6), (5, 7), (6, 8), (7, 9), (8, 10), (1, 2),
              (0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 6)]
# a keypoint is drawn when its visibility score is at least this
KEYPOINT_SCORE = 0.5


def label_color(label_id):
    """A bright colour per class: 11 hues, so neighbouring ids differ."""
    return colorsys.hsv_to_rgb((label_id % 11) / 11.0, 0.6, 1.0)


def overlaps(a, b):
    return (a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and
            a[1] < b[1] + b[3] and b[1] < a[1] + a[3])


def outline(o):
    """The polygon an object's outline is stroked along: its box (the ROI),
    or for an oriented detection its rotated rectangle, both inset by half
    the line width so that the line lies inside the box. The rotated
    rectangle's corners are c +- u +- v with u = w/2 (cos a, sin a) and
    v = h/2 (-sin a, cos a) (frame pixels, y down)."""
    obb = o["detection"].get("oriented_box")
    if obb is None:
        x, y = o["x"] + LINE_WIDTH / 2, o["y"] + LINE_WIDTH / 2
        w, h = max(o["w"] - LINE_WIDTH, 1), max(o["h"] - LINE_WIDTH, 1)
        return [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
    cx, cy, a = obb["cx"], obb["cy"], obb["angle"]
    hw = max(obb["width"] / 2 - LINE_WIDTH / 2, 0.5)
    hh = max(obb["height"] / 2 - LINE_WIDTH / 2, 0.5)
    ux, uy = hw * math.cos(a), hw * math.sin(a)
    vx, vy = -hh * math.sin(a), hh * math.cos(a)
    return [(cx + su * ux + sv * vx, cy + su * uy + sv * vy)
            for su, sv in ((-1, -1), (1, -1), (1, 1), (-1, 1))]


def label_boxes(cr, objects, width):
    """Where the labels go, in kept order: (text, x, y, w, h) each at the
    top left of its ROI (an oriented box's ROI is its hull); one that would
    cover a better one's label moves down into its own box."""
    cr.select_font_face("Sans", cairo.FONT_SLANT_NORMAL,
                        cairo.FONT_WEIGHT_BOLD)
    cr.set_font_size(18)
    placed = []
    for o in objects:
        det = o["detection"]
        text = "%s %.2f" % (det["label"], det["confidence"])
        tw, th = cr.text_extents(text).x_advance + 10, 24
        tx = min(o["x"], width - tw)
        ty = o["y"] - th if o["y"] >= th else o["y"]
        while any(overlaps((tx, ty, tw, th), p[1:]) for p in placed):
            ty += th
        placed.append((text, tx, ty, tw, th))
    return placed


def fill_mask(cr, mask, rgb):
    """An instance mask (a detection's "mask": its rectangle and runs),
    filled in rgb at half opacity over its pixels."""
    w, h = mask["width"], mask["height"]
    if w <= 0 or h <= 0:
        return
    stride = cairo.ImageSurface.format_stride_for_width(cairo.FORMAT_A8, w)
    data = bytearray(stride * h)
    pos, val = 0, 0
    for n in mask["counts"]:
        if val:
            for i in range(pos, pos + n):
                data[(i // w) * stride + i % w] = 255
        pos, val = pos + n, 1 - val
    surface = cairo.ImageSurface.create_for_data(data, cairo.FORMAT_A8, w, h,
                                                 stride)
    cr.save()
    cr.set_source_rgba(rgb[0], rgb[1], rgb[2], 0.55)
    cr.mask_surface(surface, mask["x"], mask["y"])
    cr.restore()


def draw_skeleton(cr, points, rgb):
    """A person's COCO skeleton: each limb whose two keypoints are visible
    (score >= KEYPOINT_SCORE; all without scores), then the keypoints."""
    seen = [len(p) < 3 or p[2] >= KEYPOINT_SCORE for p in points]
    cr.save()
    cr.set_line_cap(cairo.LINE_CAP_ROUND)
    cr.set_source_rgb(*rgb)
    for a, b in COCO_LIMBS:
        if a < len(points) and b < len(points) and seen[a] and seen[b]:
            cr.move_to(points[a][0], points[a][1])
            cr.line_to(points[b][0], points[b][1])
            cr.stroke()
    cr.set_source_rgb(1, 1, 1)
    for p, s in zip(points, seen):
        if s:
            cr.arc(p[0], p[1], LINE_WIDTH + 1, 0, 2 * math.pi)
            cr.fill()
    cr.restore()


def draw_detections(cr, objects, width):
    cr.set_line_width(LINE_WIDTH)
    for o in reversed(objects):  # lowest score first, the best end on top
        cr.set_source_rgb(*label_color(o["detection"]["label_id"]))
        mask = o["detection"].get("mask")
        if mask is not None:
            fill_mask(cr, mask, label_color(o["detection"]["label_id"]))
            cr.set_source_rgb(*label_color(o["detection"]["label_id"]))
        kps = o["detection"].get("keypoints")
        if kps is not None:
            draw_skeleton(cr, kps["points"],
                          label_color(o["detection"]["label_id"]))
            cr.set_source_rgb(*label_color(o["detection"]["label_id"]))
        lane = o["detection"].get("lane")
        if lane is not None:
            # a lane: its polyline, round joins and caps (every point within
            # half the line width of it)
            pts = lane["points"]
            if not pts:
                continue
            cr.save()
            cr.set_line_cap(cairo.LINE_CAP_ROUND)
            cr.set_line_join(cairo.LINE_JOIN_ROUND)
            cr.move_to(*pts[0])
            for p in pts[1:]:
                cr.line_to(*p)
            cr.stroke()
            cr.restore()
            continue
        corners = outline(o)
        cr.move_to(*corners[0])
        for p in corners[1:]:
            cr.line_to(*p)
        cr.close_path()
        cr.stroke()

    for o, (text, tx, ty, tw, th) in zip(objects,
                                         label_boxes(cr, objects, width)):
        cr.set_source_rgb(*label_color(o["detection"]["label_id"]))
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
    inject, labels, prefix = LAYOUTS[args.layout]
    if args.num_objects is not None:
        inject += "num-objects=%d " % args.num_objects
    nms = NMS_PROPS.get(args.layout, "")
    if labels is not None:
        nms += "label-file=\"%s\" " % labels
    pipeline = Gst.parse_launch(
        "videotestsrc num-buffers=%d pattern=solid-color "
        "foreground-color=0xff1c2a38 "
        "! video/x-raw,format=BGRx,width=%d,height=%d,framerate=30/1 "
        "! tensorinject %sseed=%d draw-objects=true "
        "! cudanms iou=0.45 score-threshold=%s %s"
        "! cairooverlay name=overlay ! videoconvert ! pngenc "
        "! multifilesink location=\"%s\"" % (
            args.frames, args.width, args.height, inject, args.seed,
            args.score_threshold, nms,
            os.path.join(args.out, prefix + "frame-%05d.png")))
    overlay = pipeline.get_by_name("overlay")
    pending = {}
    jsonl = open(os.path.join(args.out, prefix + "detections.jsonl"), "w")

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
    sheet = os.path.join(args.out, prefix + "contact-sheet.png")
    w, h = contact_sheet(
        [(i, os.path.join(args.out, prefix + "frame-%05d.png" % i))
         for i in picks], sheet)
    print("overlay: %d annotated frames %s, contact sheet %s (%dx%d), "
          "detections %s" % (
              args.frames, os.path.join(args.out, prefix + "frame-*.png"),
              sheet, w, h,
              os.path.join(args.out, prefix + "detections.jsonl")))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="demo-out")
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--layout", choices=sorted(LAYOUTS), default="yolov8",
                    help="the scene: boxes (yolov8), oriented boxes "
                    "(yolov8-obb), lanes (laneatt), people's keypoints "
                    "(yolov8-pose) or instance masks (yolov8-seg)")
    ap.add_argument("--num-objects", type=int, default=None,
                    help="objects in the scene (tensorinject's default)")
    # 0.3: above the synthetic scene's background noise (0.05..0.30); the
    # lane scene's background scores below 0.12, its lanes' proposals 0.82+.
    ap.add_argument("--score-threshold", default="0.3")
    args = ap.parse_args()
    Gst.init(None)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())

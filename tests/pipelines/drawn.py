#!/usr/bin/python3
"""What pipelines/python/overlay.py drew, checked pixel by pixel.

Each annotated frame is compared with the same frame before drawing (the
scene tensorinject paints, rendered again here without cudanms and
cairooverlay) and the frame's detections (its JSON line). The geometry is
worked out here, not taken from overlay.py. An object's outline is a line
3 px wide, mitred, along its box (the ROI) or, for an oriented detection
("oriented_box": cx, cy, width, height, angle), its rotated rectangle,
either inset by 1.5 px so that the line lies inside. With du, dv a
point's coordinates from the centre along u = (cos a, sin a) and
v = (-sin a, cos a) (a box: a = 0) and hw, hh the inset rectangle's half
sides, s = max(|du| - hw, |dv| - hh) is the point's distance from the
line's centre (inside and out: the mitred corners are square), and the
line covers |s| <= 1.5. A pixel is a unit square, at most 0.71 px from
its centre, so:
  - a pixel with |s| <= 0.79 for detection i and |s| >= 2.21 for every
    detection drawn after it (a better one) is exactly i's colour (what
    cairo makes of label_color, read back from a painted pixel);
  - a pixel with |s| >= 2.21 for every detection is exactly the frame
    before drawing;
  - the pixels of a label's box (overlay.label_boxes says where each
    went; the same font here) are left out of both, 1 px around; the
    strip left of its text, 1..4 px inside, is exactly the label's colour.
An axis-aligned rectangle drawn for an oriented box, or none, fails the
first two rules wherever the two outlines differ.
A lane ("lane": {"points": [[x, y], ...]}, --layout laneatt) is a
polyline 3 px wide with round joins and caps: s is a pixel centre's
distance to the nearest of its segments (the distance to segment a b:
|p - a - u (b - a)| with u = clamp((p - a).(b - a) / |b - a|^2, 0, 1)),
and the rules above hold with LANE_SLACK more on each side (cairo
flattens the round joins and caps within its 0.1 px tolerance).

  drawn.py OUT_DIR --layout L --seed S --num-objects N --frames F
      --width W --height H
checks OUT_DIR's frames as overlay.py with those options writes them.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
import cairo
import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pipelines", "python"))
import overlay  # noqa: E402

HALF = 1.5          # half the line width
PIXEL = 0.71        # a unit square's reach from its centre, rounded up
LANE_SLACK = 0.15   # cairo's tolerance (0.1) and then some


def read_rgb(path):
    """A PNG as an (h, w, 3) uint8 RGB array."""
    s = cairo.ImageSurface.create_from_png(path)
    fmt = s.get_format()
    assert fmt in (cairo.FORMAT_RGB24, cairo.FORMAT_ARGB32), (path, fmt)
    w, h, stride = s.get_width(), s.get_height(), s.get_stride()
    a = np.frombuffer(bytes(s.get_data()), np.uint8).reshape(h, stride)
    a = a[:, :4 * w].reshape(h, w, 4)
    # opaque (pngenc's RGBA from an x format): premultiplied is straight
    assert fmt == cairo.FORMAT_RGB24 or np.all(a[..., 3] == 255), path
    return a[..., [2, 1, 0]].copy()


def surface_rgb(surface):
    """An RGB24 cairo surface as an (h, w, 3) uint8 RGB array."""
    surface.flush()
    w, h = surface.get_width(), surface.get_height()
    a = np.frombuffer(bytes(surface.get_data()), np.uint8).reshape(
        h, surface.get_stride())
    return a[:, :4 * w].reshape(h, w, 4)[..., [2, 1, 0]].copy()


def painted(rgb):
    """The bytes cairo writes for the colour rgb (floats) on RGB24."""
    s = cairo.ImageSurface(cairo.FORMAT_RGB24, 1, 1)
    cr = cairo.Context(s)
    cr.set_source_rgb(*rgb)
    cr.paint()
    return surface_rgb(s)[0, 0]


def pack(rgb):
    """RGB bytes (..., 3) as one int per pixel."""
    rgb = np.asarray(rgb, np.uint32)
    return (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]


def geometry(o):
    """cx, cy, half sides of the stroke's centre line, angle: a box's line
    runs along the ROI inset by HALF (at least 1 px wide and high), an
    oriented box's along its rotated rectangle inset by HALF (half sides
    at least 0.5)."""
    obb = o["detection"].get("oriented_box")
    if obb is None:
        w, h = max(o["w"] - 2 * HALF, 1), max(o["h"] - 2 * HALF, 1)
        return (o["x"] + HALF + w / 2, o["y"] + HALF + h / 2, w / 2, h / 2,
                0.0)
    return (obb["cx"], obb["cy"], max(obb["width"] / 2 - HALF, 0.5),
            max(obb["height"] / 2 - HALF, 0.5), obb["angle"])


def lane_s(points, width, height):
    """A lane's s per pixel centre: the distance to its polyline; inf
    more than 3 px from every segment's box."""
    out = np.full((height, width), np.inf)
    pts = [tuple(p) for p in points]
    if len(pts) == 1:
        pts = pts * 2
    for (ax, ay), (bx, by) in zip(pts, pts[1:]):
        x0 = max(int(min(ax, bx) - 2 * HALF), 0)
        x1 = min(int(np.ceil(max(ax, bx) + 2 * HALF)) + 1, width)
        y0 = max(int(min(ay, by) - 2 * HALF), 0)
        y1 = min(int(np.ceil(max(ay, by) + 2 * HALF)) + 1, height)
        if x1 <= x0 or y1 <= y0:
            continue
        ys, xs = np.mgrid[y0:y1, x0:x1]
        px, py = xs + 0.5, ys + 0.5
        dx, dy = bx - ax, by - ay
        l2 = dx * dx + dy * dy
        u = np.zeros(px.shape) if l2 == 0 else np.clip(
            ((px - ax) * dx + (py - ay) * dy) / l2, 0, 1)
        d = np.hypot(px - ax - u * dx, py - ay - u * dy)
        out[y0:y1, x0:x1] = np.minimum(out[y0:y1, x0:x1], d)
    return out


def slack(o):
    """The extra margin of o's rules: LANE_SLACK for a lane, else 0."""
    return LANE_SLACK if "lane" in o["detection"] else 0.0


def stroke_s(o, width, height):
    """s per pixel centre (the line's distance, see above); inf away from
    the outline's hull widened by 3 px, where s > 2.21 anyway."""
    lane = o["detection"].get("lane")
    if lane is not None:
        return lane_s(lane["points"], width, height)
    cx, cy, hw, hh, a = geometry(o)
    c, sn = np.cos(a), np.sin(a)
    ex = abs(hw * c) + abs(hh * sn) + 2 * HALF
    ey = abs(hw * sn) + abs(hh * c) + 2 * HALF
    x0, x1 = max(int(cx - ex), 0), min(int(np.ceil(cx + ex)) + 1, width)
    y0, y1 = max(int(cy - ey), 0), min(int(np.ceil(cy + ey)) + 1, height)
    out = np.full((height, width), np.inf)
    if x1 <= x0 or y1 <= y0:
        return out
    ys, xs = np.mgrid[y0:y1, x0:x1]
    dx, dy = xs + 0.5 - cx, ys + 0.5 - cy
    du = dx * c + dy * sn
    dv = -dx * sn + dy * c
    out[y0:y1, x0:x1] = np.maximum(np.abs(du) - hw, np.abs(dv) - hh)
    return out


def check_frame(img, before, objects, width, height, where=""):
    """Checks one annotated frame; returns the pixels checked
    (outline, label, untouched)."""
    assert img.shape == (height, width, 3), (where, img.shape)
    assert before.shape == img.shape, (where, before.shape)
    ctx = cairo.Context(cairo.ImageSurface(cairo.FORMAT_RGB24, 1, 1))
    labels = overlay.label_boxes(ctx, objects, width)
    free = np.ones((height, width), bool)       # not under a label
    strips = []
    for o, (_, tx, ty, tw, th) in zip(objects, labels):
        x0, y0 = max(int(np.floor(tx)) - 1, 0), max(int(np.floor(ty)) - 1, 0)
        x1 = min(int(np.ceil(tx + tw)) + 1, width)
        y1 = min(int(np.ceil(ty + th)) + 1, height)
        free[y0:y1, x0:x1] = False
        strips.append((o, int(np.ceil(tx)) + 1, int(np.floor(tx)) + 5,
                       int(np.ceil(ty)) + 1, int(np.floor(ty + th)) - 1))
    ds = [stroke_s(o, width, height) for o in objects]
    packed = pack(img)
    untouched = [(d >= HALF + PIXEL + slack(o)) |
                 (d <= -HALF - PIXEL - slack(o))
                 for d, o in zip(ds, objects)]
    n_outline = n_seen = 0
    for i, o in enumerate(objects):
        want = painted(overlay.label_color(o["detection"]["label_id"]))
        mask = (np.abs(ds[i]) <= HALF - PIXEL - slack(o)) & free
        for j in range(i):      # drawn after i
            mask &= untouched[j]
        bad = mask & (packed != pack(want))
        if bad.any():
            y, x = np.argwhere(bad)[0]
            raise AssertionError(
                "%s detection %d (%s): pixel %d,%d on its outline is %s, "
                "not %s (%d such pixels)" % (
                    where, i, o["detection"]["label"], x, y,
                    tuple(img[y, x]), tuple(want), int(bad.sum())))
        n_outline += int(mask.sum())
        n_seen += mask.sum() >= 20
    # most outlines are seen (a part may be off the frame, under a label or
    # under a better one's outline)
    assert 2 * n_seen >= len(objects), (where, n_seen, len(objects))
    n_label = 0
    for o, x0, x1, y0, y1 in strips:
        want = painted(overlay.label_color(o["detection"]["label_id"]))
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, width), \
            min(y1, height)
        if x1 <= x0 or y1 <= y0:
            continue
        part = img[y0:y1, x0:x1]
        assert np.all(part == want), (where, "label", o["detection"]["label"],
                                      x0, y0, part.reshape(-1, 3)[:4])
        n_label += part.shape[0] * part.shape[1]
    clear = free.copy()
    for u in untouched:
        clear &= u
    bad = clear & (packed != pack(before))
    if bad.any():
        y, x = np.argwhere(bad)[0]
        raise AssertionError(
            "%s pixel %d,%d away from every outline and label is %s, the "
            "frame had %s (%d such pixels)" % (
                where, x, y, tuple(img[y, x]), tuple(before[y, x]),
                int(bad.sum())))
    return n_outline, n_label, int(clear.sum())


def render_before(out, layout, seed, num_objects, frames, width, height):
    """The frames as tensorinject paints them, before cudanms and the
    overlay: out/before-%05d.png."""
    inject, _, _ = overlay.LAYOUTS[layout]
    if num_objects is not None:
        inject += "num-objects=%d " % num_objects
    pipeline = Gst.parse_launch(
        "videotestsrc num-buffers=%d pattern=solid-color "
        "foreground-color=0xff1c2a38 "
        "! video/x-raw,format=BGRx,width=%d,height=%d,framerate=30/1 "
        "! tensorinject %sseed=%d draw-objects=true ! videoconvert ! pngenc "
        "! multifilesink location=\"%s\"" % (
            frames, width, height, inject, seed,
            os.path.join(out, "before-%05d.png")))
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(
        Gst.CLOCK_TIME_NONE, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert msg.type == Gst.MessageType.EOS, msg.parse_error()


def check_dir(out, layout, seed, num_objects, frames, width, height):
    """Checks every frame overlay.py wrote into out; returns the totals
    (frames, detections, oriented, outline, label, untouched pixels,
    lanes)."""
    prefix = overlay.LAYOUTS[layout][2]
    with open(os.path.join(out, prefix + "detections.jsonl")) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    assert len(lines) == frames, (len(lines), frames)
    totals = [0] * 7
    with tempfile.TemporaryDirectory() as tmp:
        render_before(tmp, layout, seed, num_objects, frames, width, height)
        for k, line in enumerate(lines):
            objects = line["objects"]
            if layout == "yolov8-obb":
                assert all("oriented_box" in o["detection"]
                           for o in objects), (k, objects)
            if layout == "laneatt":
                assert all(len(o["detection"].get("lane", {}).get(
                    "points", [])) >= 2 for o in objects), (k, objects)
            img = read_rgb(os.path.join(out, prefix + "frame-%05d.png" % k))
            before = read_rgb(os.path.join(tmp, "before-%05d.png" % k))
            n = check_frame(img, before, objects, width, height,
                            "%sframe %d:" % (prefix, k))
            totals[0] += 1
            totals[1] += len(objects)
            totals[2] += sum("oriented_box" in o["detection"]
                             for o in objects)
            for t in range(3):
                totals[3 + t] += n[t]
            totals[6] += sum("lane" in o["detection"] for o in objects)
    return totals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--layout", choices=sorted(overlay.LAYOUTS),
                    default="yolov8")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--num-objects", type=int, default=None)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=720)
    args = ap.parse_args()
    Gst.init(None)
    t = check_dir(args.out, args.layout, args.seed, args.num_objects,
                  args.frames, args.width, args.height)
    kinds = "%d oriented" % t[2]
    if args.layout == "laneatt":
        kinds = "%d lanes" % t[6]
    print("drawn: %d %sframes, %d detections (%s): %d outline, %d "
          "label and %d untouched pixels exact" % (
              t[0], overlay.LAYOUTS[args.layout][2], t[1], kinds, t[3], t[4],
              t[5]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

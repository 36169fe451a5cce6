#!/usr/bin/python3
"""pipelines/python/overlay.py (the visual demo) and cudanms-print --json on
the seeded synthetic scenes of tensorinject.

Boxes: the expectation is computed independently: the test takes the very
tensors tensorinject attaches (same seed, same frames) and runs the NumPy
reference (nms_ref.py) on them. Both apps' JSON lines must match it, and
the PNG frames and the contact sheet must exist with the right pixel size.

What is drawn: drawn.py checks every frame pixel by pixel (each outline's
line exactly its class colour, every pixel away from outlines and labels
exactly the frame tensorinject painted), on the box scene and on the
oriented one (--layout yolov8-obb: each detection's rotated rectangle,
its JSON lines the same objects as cudanms-print --json's, each with its
oriented box). draw_detections itself is checked on two hand-made
detections, pixels worked out by hand.

Lanes (--layout laneatt): the tensors tensorinject attaches (layout=laneatt)
go through a NumPy LaneATT NMS written here (softmax score above 0.5,
LaneATT's rows, the mean horizontal distance over the shared rows below
50); every frame's JSON lines must hold exactly those lanes, best first,
their confidences and their points (model 640x360 = frame, so a row i's
point is (x_i, (71 - i) / 71 * 360)); drawn.py checks each lane's polyline
pixel by pixel; draw_detections draws a hand-made lane, pixels by hand."""
import colorsys
import math
import os
import sys
import tempfile

from common import (PIPELINES, PRINT, check_frame, json_lines, need,
                    png_size, run)

need("numpy", "gi", "cairo", "gi-cairo")

import numpy as np  # noqa: E402
import cairo  # noqa: E402
import gi  # noqa: E402
gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402
from nms_ref import reference  # noqa: E402
import drawn  # noqa: E402
import overlay  # noqa: E402 (drawn.py put pipelines/python on the path)

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


OBB_SEED, OBB_OBJECTS = 4, 4
OBB_SRC = ("videotestsrc num-buffers=%d ! video/x-raw,width=%d,height=%d,"
           "framerate=30/1 ! tensorinject layout=yolov8-obb "
           "tensor-id=yolo-v8-obb-out num-classes=15 num-objects=%d seed=%d"
           % (FRAMES, WIDTH, HEIGHT, OBB_OBJECTS, OBB_SEED))


def check_hand_drawing():
    """draw_detections on a plain 320x240 surface: an oriented detection
    (cx 100, cy 80, 60 x 20, angle 0.5, class 3; its ROI, the hull, is
    68,56 64x48) and a box (200,150 60x40, class 5)."""
    bg = (0x1c / 255, 0x2a / 255, 0x38 / 255)
    objects = [
        {"region_id": 0, "roi_type": "a", "x": 68, "y": 56, "w": 64,
         "h": 48, "detection": {
             "label": "a", "label_id": 3, "confidence": 0.9,
             "oriented_box": {"cx": 100.0, "cy": 80.0, "width": 60.0,
                              "height": 20.0, "angle": 0.5}}},
        {"region_id": 1, "roi_type": "b", "x": 200, "y": 150, "w": 60,
         "h": 40, "detection": {"label": "b", "label_id": 5,
                                "confidence": 0.8}},
    ]

    def surface():
        s = cairo.ImageSurface(cairo.FORMAT_RGB24, 320, 240)
        cr = cairo.Context(s)
        cr.set_source_rgb(*bg)
        cr.paint()
        return s, cr

    before, _ = surface()
    s, cr = surface()
    overlay.draw_detections(cr, objects, 320)
    img, plain = drawn.surface_rgb(s), drawn.surface_rgb(before)
    # the class colours, hsv (k/11, 0.6, 1.0), as cairo paints them
    a_col = drawn.painted(colorsys.hsv_to_rgb(3 / 11, 0.6, 1.0))
    b_col = drawn.painted(colorsys.hsv_to_rgb(5 / 11, 0.6, 1.0))
    bg_col = plain[0, 0]
    assert not np.array_equal(a_col, bg_col)
    # By hand, u = (cos 0.5, sin 0.5) = (0.8776, 0.4794), v = (-0.4794,
    # 0.8776); the line runs 28.5 along u and 8.5 along v from the centre.
    # Pixel 125,93 (centre 125.5,93.5: du 28.85, dv -0.38) is on the long
    # side's line, 95,87 (95.5,87.5: du -0.35, dv 8.74) on the short
    # side's; 100,80 (the centre) is inside and not filled; 70,58 (du
    # -36.2) is in the hull's corner, outside the rotated rectangle, where
    # an axis-aligned outline of the ROI (line at x 69.5 +- 1.5) would be.
    for (x, y), want in (((125, 93), a_col), ((95, 87), a_col),
                         ((100, 80), bg_col), ((70, 58), bg_col),
                         # the box: its left line at x 201.5, its inside
                         ((201, 170), b_col), ((230, 170), bg_col)):
        assert np.array_equal(img[y, x], want), ((x, y), img[y, x], want)
    n = drawn.check_frame(img, plain, objects, 320, 240, "hand:")
    assert n[0] > 2 * (60 + 20 + 60 + 40), n   # most of both perimeters


def check_hand_lane():
    """draw_detections on a plain 320x240 surface: a lane through
    (40, 200), (100, 100), (160, 100) (its ROI, the points' rectangle, is
    40,100 120x100), class 0."""
    bg = (0x1c / 255, 0x2a / 255, 0x38 / 255)
    objects = [{"region_id": 0, "roi_type": "lane", "x": 40, "y": 100,
                "w": 120, "h": 100, "detection": {
                    "label": "lane", "label_id": 0, "confidence": 0.98,
                    "lane": {"points": [[40.0, 200.0], [100.0, 100.0],
                                        [160.0, 100.0]]}}}]

    def surface():
        sf = cairo.ImageSurface(cairo.FORMAT_RGB24, 320, 240)
        cr = cairo.Context(sf)
        cr.set_source_rgb(*bg)
        cr.paint()
        return sf, cr

    before, _ = surface()
    sf, cr = surface()
    overlay.draw_detections(cr, objects, 320)
    img, plain = drawn.surface_rgb(sf), drawn.surface_rgb(before)
    col = drawn.painted(colorsys.hsv_to_rgb(0.0, 0.6, 1.0))
    bg_col = plain[0, 0]
    # By hand: pixel 130,99 (centre 130.5,99.5) lies 0.5 from the flat
    # segment; 130,103 (103.5) 3.5 from it; 70,149 (70.5,149.5) lies
    # (0.5, -0.5) . (100, 60) / 116.62 = 0.17 from the slanted one (normal
    # (0.8575, 0.5145)); 100,130 is 30 below the bend, inside the angle;
    # 41,101 is the ROI's corner, where a box outline would be; 165,100
    # lies 4.5 beyond the round cap at 160,100 (reach 1.5).
    for (x, y), want in (((130, 99), col), ((70, 149), col),
                         ((130, 103), bg_col), ((100, 130), bg_col),
                         ((41, 101), bg_col), ((165, 100), bg_col)):
        assert np.array_equal(img[y, x], want), ((x, y), img[y, x], want)
    n = drawn.check_frame(img, plain, objects, 320, 240, "hand lane:")
    # the band within 0.64 of the polyline: 2 rows of 60 along the flat
    # segment, about 1.28 x 116.6 = 149 along the slanted one; the label
    # (top left of the ROI, 40,76) covers the part of it above y 101
    assert 120 < n[0] <= 270, n


LANE_SEED, LANE_FRAMES, LANE_ROWS = 3, 3, 72


def lane_tensors():
    """The tensors tensorinject layout=laneatt attaches, [N, 5+S]."""
    pipeline = Gst.parse_launch(
        "videotestsrc num-buffers=%d ! video/x-raw,width=640,height=360,"
        "framerate=30/1 ! tensorinject layout=laneatt seed=%d "
        "! appsink name=sink sync=false" % (LANE_FRAMES, LANE_SEED))
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    out = []
    for _ in range(LANE_FRAMES):
        buf = sink.emit("pull-sample").get_buffer()
        st = buf.get_custom_meta("CudanmsTensorMeta").get_structure()
        assert st.get_value("id") == "laneatt-proposals"
        dims = [int(d) for d in st.get_value("dims")]
        assert dims == [1, 1000, 5 + LANE_ROWS], dims
        ok, info = st.get_value("data").map(Gst.MapFlags.READ)
        assert ok
        out.append(np.frombuffer(info.data, np.float32).reshape(dims[1:])
                   .copy())
    pipeline.set_state(Gst.State.NULL)
    return out


def lane_reference(t, threshold=0.5, distance=50.0):
    """LaneATT's NMS on one tensor: (score, proposal) of the kept lanes,
    best first (ties: lower index)."""
    n = LANE_ROWS - 1
    scores = 1.0 / (1.0 + np.exp(t[:, 0].astype(np.float64) - t[:, 1]))
    order = sorted(np.nonzero(scores > threshold)[0],
                   key=lambda i: (-scores[i], i))

    def rows(r):
        start = int(float(np.float32(r[2] * n)) + 0.5)
        end = int(float(np.float32(start + r[4] - 1)) + 0.5)
        return start, end

    kept = []
    for i in order:
        sa, ea = rows(t[i])
        close = False
        for _, k in kept:
            sb, eb = rows(t[k])
            s, e = max(sa, sb), min(ea, eb, n)
            if e < s:
                continue
            d = np.abs(t[i, 5 + s:6 + e] - t[k, 5 + s:6 + e]).sum()
            close = close or d < distance * (e - s + 1)
        if not close:
            kept.append((scores[i], i))
    return kept


def check_lane_overlay():
    tensors = lane_tensors()
    with tempfile.TemporaryDirectory() as out:
        rc, text = run(["/usr/bin/python3",
                        os.path.join(PIPELINES, "python", "overlay.py"),
                        "--out", out, "--frames", str(LANE_FRAMES),
                        "--width", "640", "--height", "360", "--layout",
                        "laneatt", "--seed", str(LANE_SEED),
                        "--score-threshold", "0.5"])
        assert rc == 0, rc
        assert os.path.join(out, "lanes-contact-sheet.png") in text, text
        with open(os.path.join(out, "lanes-detections.jsonl")) as f:
            got = json_lines(f.read())
        assert len(got) == LANE_FRAMES, len(got)
        for k, (frame, t) in enumerate(zip(got, tensors)):
            want = lane_reference(t)
            # the scene's 4 lanes, one proposal each (several near-duplicates
            # suppressed per lane)
            assert len(want) == 4 and len(np.nonzero(
                1 / (1 + np.exp(t[:, 0] - t[:, 1])) > 0.5)[0]) > 8, want
            objs = frame["objects"]
            assert len(objs) == len(want), (k, objs)
            for o, (score, i) in zip(objs, want):
                det = o["detection"]
                assert det["label"] == "lane" and det["label_id"] == 0, det
                assert abs(det["confidence"] - score) < 2e-6, (det, score)
                n = LANE_ROWS - 1
                start = int(float(np.float32(t[i, 2] * n)) + 0.5)
                end = int(float(np.float32(start + t[i, 4] - 1)) + 0.5)
                assert start == 0 and end == 35, (start, end)
                pts = det["lane"]["points"]
                assert len(pts) == end - start + 1, len(pts)
                for r, (x, y) in zip(range(start, end + 1), pts):
                    assert abs(x - float(t[i, 5 + r])) < 1e-4, (k, r, x)
                    assert abs(y - (n - r) / n * 360) < 1e-3, (k, r, y)
        t = drawn.check_dir(out, "laneatt", LANE_SEED, None, LANE_FRAMES,
                            640, 360)
        assert t[0] == LANE_FRAMES and t[1] == 4 * LANE_FRAMES and \
            t[6] == t[1] and t[2] == 0, t


def without_producer(frames):
    for f in frames:
        for o in f["objects"]:
            del o["detection"]["producer"]
    return frames


def check_obb_overlay():
    with tempfile.TemporaryDirectory() as out:
        rc, text = run(["/usr/bin/python3",
                        os.path.join(PIPELINES, "python", "overlay.py"),
                        "--out", out, "--frames", str(FRAMES), "--width",
                        str(WIDTH), "--height", str(HEIGHT), "--layout",
                        "yolov8-obb", "--seed", str(OBB_SEED),
                        "--num-objects", str(OBB_OBJECTS),
                        "--score-threshold", THRESHOLD])
        assert rc == 0, rc
        assert os.path.join(out, "obb-contact-sheet.png") in text, text
        with open(os.path.join(out, "obb-detections.jsonl")) as f:
            got = json_lines(f.read())
        rc, printed = run([PRINT, "--json"] + OBB_SRC.split() + [
            "!", "cudanms", "name=nms", "iou=0.45",
            "score-threshold=" + THRESHOLD,
            "label-file=" + os.path.join(PIPELINES, "dota.names"),
            "!", "fakesink"])
        assert rc == 0, rc
        assert without_producer(got) == without_producer(
            json_lines(printed)), (got, printed)
        for k in range(FRAMES):
            assert png_size(os.path.join(out, "obb-frame-%05d.png" % k)) == \
                (WIDTH, HEIGHT), k
        assert not os.path.exists(os.path.join(out, "frame-00000.png"))
        assert png_size(os.path.join(out, "obb-contact-sheet.png")) == \
            (3 * WIDTH // 2 + 4 * 8, 2 * HEIGHT // 2 + 3 * 8)
        t = drawn.check_dir(out, "yolov8-obb", OBB_SEED, OBB_OBJECTS, FRAMES,
                            WIDTH, HEIGHT)
        # every frame has the scene's objects, each drawn rotated
        assert t[0] == FRAMES and t[1] >= FRAMES * OBB_OBJECTS and \
            t[2] == t[1], t
        # a turning object: some angles far from 0 (an axis-aligned outline
        # would fail drawn's checks there)
        angles = [abs(math.sin(2 * o["detection"]["oriented_box"]["angle"]))
                  for f in got for o in f["objects"]]
        assert max(angles) > 0.5, angles


def main():
    Gst.init(None)
    check_hand_drawing()
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
        t = drawn.check_dir(out, "yolov8", SEED, None, FRAMES, WIDTH,
                            HEIGHT)
        assert t[:3] == [FRAMES, sum(len(e) for _, e in expected), 0], t

    rc, text = run([PRINT, "--json"] + SRC.split() + [
        "!", "cudanms", "name=nms", "score-threshold=" + THRESHOLD,
        "label-file=" + os.path.join(PIPELINES, "coco.names"),
        "!", "fakesink"])
    assert rc == 0, rc
    check_json(json_lines(text), expected, "nms")
    check_obb_overlay()
    check_hand_lane()
    check_lane_overlay()
    print("OK: overlay.py and cudanms-print match the NumPy reference on "
          "the seeded scene; PNG sizes right; the boxes, the oriented boxes' "
          "rotated rectangles, the lanes and the labels drawn exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())

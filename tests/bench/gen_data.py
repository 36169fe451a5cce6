#!/usr/bin/env python3
"""Writes the benchmark inputs as .npy, so every contender reads the same bits.

usage: gen_data.py DATA_DIR

  nms_boxes.npy    float32 [32768, 4]  x1 y1 x2 y2: centres uniform in
                   1920x1080, w and h uniform in 8..258
  nms_scores.npy   float32 [32768]     uniform in [0, 1)
  nms_classes.npy  int32   [32768]     uniform in 0..79
  nms_1m_boxes.npy float32 [1000000, 4]  the same distribution, another
  nms_1m_scores.npy float32 [1000000]    seed (CPU backend only)
  yolov8.npy       float32 [1, 84, 8400]   synthetic YOLOv8 frame
  yolov5.npy       float32 [1, 25200, 85]  synthetic YOLOv5 frame
  yolov8_obb.npy   float32 [1, 20, 21504]  synthetic YOLOv8-OBB frame
  nms_obb_boxes.npy float32 [32768, 5] cx cy w h angle: the boxes of
                   nms_boxes.npy with an angle uniform in [-pi/2, pi/2)
  laneatt.npy      float32 [1, 1000, 77]   synthetic LaneATT frame (S = 72)
  yolov8_seg.npy   float32 [1, 116, 8400]  synthetic YOLOv8-seg frame (80
                   classes, 32 mask coefficients)
  yolov8_seg_protos.npy float32 [1, 32, 160, 160] its prototypes
  yolov8_pose.npy  float32 [1, 56, 8400]   synthetic YOLOv8-pose frame (17
                   keypoints x 3)
  tiles.npy        float32 [33, 84, 8400]  a 3840x2160 frame's 32 slices
                   (640x640, SAHI's grid, overlap 0.2) and the whole frame
                   last, each a YOLOv8 frame of the 640x640 model
  params.json      what the frames are and how to post-process them

The NMS sizes N use the first N rows: a prefix of i.i.d. boxes is itself
an i.i.d. sample of the same distribution.

Frames (640x640 model, 80 classes, stride 8/16/32 grids, three anchors per
cell for YOLOv5): a background of low class scores, NOISE anchors scoring
0.05..0.24 (one in twenty 0.25..0.30), and OBJECTS objects each scoring a
cluster of 10-60 anchors around its centre, with jittered boxes and scores
falling off from a peak of 0.6..0.95; three in ten objects also score a
second class at half the score on every third anchor of the cluster.

The YOLOv8-OBB frame (obb_frame; 1024x1024 model, 15 classes, rows cx cy w
h, 15 class scores, angle in radians, ultralytics' range [-pi/4, 3pi/4)):
the same background, OBB_NOISE noise anchors, and OBB_OBJECTS oriented
objects (w 16..200, h 0.2..1 of w, any angle), each scoring a cluster of
10-60 anchors with centre, size and angle jittered (3 %, 0.05 rad), a
member whose angle leaves [-pi/4, 3pi/4) written as the same rectangle
turned by pi back into it; three in ten objects score a second class at
half the score on every third anchor.

The LaneATT frame (lane_frame; LANE_N = 1000 proposals, S = 72 rows, 640x360
model, rows: logits l0 l1, start_y, start_x, length, 72 x offsets in model
pixels, row 0 at the bottom): 2-4 lanes (seeded) from the bottom edge
towards one vanishing point at about 0.4 of the height, each bent by a
quadratic term, each scored by 10-40 near-duplicate proposals (x jittered
by a per-proposal shift of sigma 3-8 px plus 1.5 px per row, start row and
length jittered, lane logit l1 - l0 about 2..5: scores 0.88..0.99), and
the rest background proposals (random straight-ish lines, any start and
length; l1 - l0 drawn so that about 5 % of them also score above 0.5,
most far below). Scored as LaneATT does, softmax(l0, l1)[1]; LaneATT's
test config: score 0.5, NMS distance 50 (model px), top_k 4, frame
1280x720, no letterbox (LaneATT resizes).

The YOLOv8-seg frame (seg_frame): the YOLOv8 frame's generator with its own
seed, SEG_OBJECTS objects and SEG_NOISE noise anchors: about 30 kept
instances, then 32 coefficient
rows: an object's anchors share its coefficients (drawn N(0, 1), jittered
by 0.05), the others' are N(0, 1); the prototypes are 32 smooth planes
(products of low-frequency cosines in x and y, random phases) at 160x160.
The model and frame are 640x640, letterbox, the frames' other parameters.

The YOLOv8-pose frame (pose_frame): the YOLOv8 frame itself (its seed),
its boxes with the best class score as the person score (one class: the
same candidates as the YOLOv8 frame), then 17 keypoints per anchor (x, y
inside its box, a visibility score uniform in [0, 1), drawn from
SEED_POSE).

The tiles (tiles_frames, SEED_TILES): TILES_OBJECTS = 150 objects, w and h
uniform in 8..80 frame pixels, anywhere in a 3840x2160 frame, 80 classes
(three in ten with a second class), cut by SAHI's grid
(sahi_ref.slice_bboxes(2160, 3840, 640, 640, 0.2, 0.2): overlaps of 128
pixels, 8 x 4 = 32 slices, the last column and row moved back to end at
the frame's edge), then the whole frame (SAHI's standard prediction):
B = 33. Each is a YOLOv8 frame of the 640x640 model: the frames' background
with TILES_NOISE = 100 noise draws (about 6 noise anchors above 0.25 a
view), and for each object part inside it (its intersection with the
slice; a part under 2 pixels wide or high is not seen) a cluster of 10-60
anchors as the frames' objects have (put_cluster; an anchor written once),
the part in model pixels (a slice maps 1:1; the whole frame by
ultralytics' letterbox, 1/6 and 140 rows of pad), scoring the object's
peak (0.6..0.95) times 0.5 + 0.5 x the share of the object's area the
slice sees. The whole frame sees the objects of 16 pixels and more (both
sides: 113 of them) at 0.8 times their peak; 86 objects are seen in two
slices or more. 557 records reach the merge (score 0.25, IoU 0.45), 316
detections come out of it (SAHI's defaults: greedy NMM, IoS 0.5, each
class alone).
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
import sahi_ref  # noqa: E402  (SAHI's slice grid)

N_MAX = 32768
N_1M = 1000000
N_CLASSES = 80
MODEL = 640
STRIDES = (8, 16, 32)
OBJECTS = 25
NOISE = 2000
SEED_NMS = 20240601
SEED_1M = 20240602
SEED_FRAME = {"yolov8": 8, "yolov5": 5}
OBB_MODEL = 1024
OBB_CLASSES = 15
OBB_OBJECTS = 40
OBB_NOISE = 3000
SEED_OBB = 1024
SEED_OBB_ANGLES = 20240603
LANE_N = 1000
LANE_S = 72
LANE_MODEL = (640, 360)
SEED_LANES = 72
SEED_SEG = 32
SEG_OBJECTS = 18
SEG_NOISE = 200
SEG_M = 32
SEG_P = 160
SEED_POSE = 17
POSE_K = 17
TILES_FRAME = (3840, 2160)
TILES_SLICE = 640
TILES_OVERLAP = 0.2
TILES_OBJECTS = 150
TILES_SIZES = (8, 80)
TILES_PART_LEAST = 2
TILES_FULL_LEAST = 16
TILES_FULL_SCORE = 0.8
TILES_NOISE = 100
SEED_TILES = 3840


def nms_inputs(rng, n=N_MAX):
    cx = rng.uniform(0, 1920, n)
    cy = rng.uniform(0, 1080, n)
    w = rng.uniform(8, 258, n)
    h = rng.uniform(8, 258, n)
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1)
    scores = rng.uniform(0, 1, n)
    classes = rng.integers(0, N_CLASSES, n)
    return (boxes.astype(np.float32), scores.astype(np.float32),
            classes.astype(np.int32))


def grid_cells():
    """(level, gx, gy) of every cell, in YOLO's anchor order."""
    cells = []
    for level, s in enumerate(STRIDES):
        g = MODEL // s
        gy, gx = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
        cells.append(np.stack([np.full(g * g, level), gx.ravel(),
                               gy.ravel()], 1))
    return np.concatenate(cells)


def frame_base(rng, yolov5, noise=NOISE):
    """A frame's background, rows [N, 5+C] (yolov5) or [N, 4+C] (float64):
    every anchor a box at its cell's centre and low class scores, then
    noise anchors scoring 0.05..0.24 (one in twenty 0.25..0.30)."""
    cells = grid_cells()
    per_cell = 3 if yolov5 else 1
    n = len(cells) * per_cell
    off = 5 if yolov5 else 4
    t = np.zeros((n, off + N_CLASSES), np.float64)
    cell_of = np.repeat(np.arange(len(cells)), per_cell)
    stride = np.array(STRIDES)[cells[cell_of, 0]]
    t[:, 0] = (cells[cell_of, 1] + 0.5) * stride
    t[:, 1] = (cells[cell_of, 2] + 0.5) * stride
    t[:, 2] = stride * (1 + 3 * rng.uniform(size=n))
    t[:, 3] = stride * (1 + 3 * rng.uniform(size=n))
    t[:, off:] = 0.02 * rng.uniform(size=(n, N_CLASSES))
    if yolov5:
        t[:, 4] = 0.001 + 0.02 * rng.uniform(size=n)
    for _ in range(noise):
        a = int(rng.integers(n))
        score = (0.25 + 0.05 * rng.uniform() if rng.uniform() < 0.05
                 else 0.05 + 0.19 * rng.uniform())
        put_score(t, yolov5, a, int(rng.integers(N_CLASSES)), score,
                  0.5 + 0.4 * rng.uniform())
    return t


def put_score(t, yolov5, a, c, score, obj):
    """Anchor a of rows t scores class c at score (yolov5: as obj times
    the class score)."""
    off = 5 if yolov5 else 4
    if yolov5:
        t[a, 4] = obj
        t[a, off + c] = min(score / obj, 1.0)
    else:
        t[a, off + c] = score


def put_cluster(t, rng, yolov5, c, c2, box, peak, want, taken=None):
    """An object's cluster in rows t: up to want anchors on the rings (0 to
    4) of grid cells around the centre cx, cy of box (cx cy w h, model
    pixels) on the level its size picks, each a jittered box (3 %) scoring
    class c from peak, falling off by ring; class c2 (or -1: none) at half
    the score on every third. taken (a bool per anchor, or None): anchors
    another cluster wrote are skipped, and those written marked."""
    cx, cy, w, h = box
    per_cell = 3 if yolov5 else 1
    off = 5 if yolov5 else 4
    level_start = np.cumsum([0] + [(MODEL // s) ** 2 for s in STRIDES])
    level = 0 if max(w, h) < 64 else 1 if max(w, h) < 128 else 2
    s, g = STRIDES[level], MODEL // STRIDES[level]
    gx0, gy0 = min(int(cx / s), g - 1), min(int(cy / s), g - 1)
    written = 0
    for r in range(5):
        for dy in range(-r, r + 1):
            for dx in range(-r, r + 1):
                gx, gy = gx0 + dx, gy0 + dy
                if (written >= want or max(abs(dx), abs(dy)) != r
                        or not (0 <= gx < g and 0 <= gy < g)):
                    continue
                cell = level_start[level] + gy * g + gx
                a = cell * per_cell + (written % per_cell)
                if taken is not None:
                    if taken[a]:
                        continue
                    taken[a] = True
                score = peak * (1 - 0.35 * r / 4) - 0.05 * rng.uniform()
                j = 0.03 * (2 * rng.uniform(size=4) - 1)
                t[a, 0:4] = (cx + w * j[0], cy + h * j[1],
                             w * (1 + j[2]), h * (1 + j[3]))
                put_score(t, yolov5, a, c, score, 0.88 + 0.04 * rng.uniform())
                if c2 >= 0 and written % 3 == 0:
                    t[a, off + c2] = (0.5 * score / t[a, 4] if yolov5
                                      else 0.5 * score)
                written += 1


def frame(rng, yolov5, objects=OBJECTS, noise=NOISE):
    """Rows [N, 5+C] (yolov5) or [N, 4+C] before the yolov8 transpose."""
    t = frame_base(rng, yolov5, noise)
    for _ in range(objects):
        c = int(rng.integers(N_CLASSES))
        c2 = int((c + 1 + rng.integers(N_CLASSES - 1)) % N_CLASSES) \
            if rng.uniform() < 0.3 else -1
        w, h = 30 + 170 * rng.uniform(size=2)
        cx = w / 2 + rng.uniform() * (MODEL - w)
        cy = h / 2 + rng.uniform() * (MODEL - h)
        peak = 0.6 + 0.35 * rng.uniform()
        want = int(rng.integers(10, 61))
        put_cluster(t, rng, yolov5, c, c2, (cx, cy, w, h), peak, want)
    t = t.astype(np.float32)
    return t[None] if yolov5 else np.ascontiguousarray(t.T)[None]


def obb_frame(rng, objects=OBB_OBJECTS, noise=OBB_NOISE):
    """A YOLOv8-OBB tensor [1, 4+C+1, N] (float32), N = 21504 anchors of
    the 1024x1024 model's stride 8/16/32 grids, C = OBB_CLASSES."""
    cells = []
    for level, s in enumerate(STRIDES):
        g = OBB_MODEL // s
        gy, gx = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
        cells.append(np.stack([np.full(g * g, level), gx.ravel(),
                               gy.ravel()], 1))
    cells = np.concatenate(cells)
    n, c = len(cells), OBB_CLASSES
    lo, hi = -np.pi / 4, 3 * np.pi / 4
    t = np.zeros((n, 5 + c), np.float64)
    stride = np.array(STRIDES)[cells[:, 0]]
    t[:, 0] = (cells[:, 1] + 0.5) * stride
    t[:, 1] = (cells[:, 2] + 0.5) * stride
    t[:, 2] = stride * (1 + 3 * rng.uniform(size=n))
    t[:, 3] = stride * (1 + 3 * rng.uniform(size=n))
    t[:, 4:4 + c] = 0.02 * rng.uniform(size=(n, c))
    t[:, 4 + c] = rng.uniform(lo, hi, n)
    for _ in range(noise):
        a = int(rng.integers(n))
        t[a, 4 + int(rng.integers(c))] = (
            0.25 + 0.05 * rng.uniform() if rng.uniform() < 0.05
            else 0.05 + 0.19 * rng.uniform())
    level_start = np.cumsum([0] + [(OBB_MODEL // s) ** 2 for s in STRIDES])
    for _ in range(objects):
        k = int(rng.integers(c))
        k2 = int((k + 1 + rng.integers(c - 1)) % c) \
            if rng.uniform() < 0.3 else -1
        w = 16 + 184 * rng.uniform()
        h = w * (0.2 + 0.8 * rng.uniform())
        ang = rng.uniform(lo, hi)
        r = 0.5 * np.hypot(w, h)
        cx = r + rng.uniform() * (OBB_MODEL - 2 * r)
        cy = r + rng.uniform() * (OBB_MODEL - 2 * r)
        peak = 0.6 + 0.35 * rng.uniform()
        want = int(rng.integers(10, 61))
        level = 0 if w < 64 else 1 if w < 128 else 2
        s, g = STRIDES[level], OBB_MODEL // STRIDES[level]
        gx0, gy0 = min(int(cx / s), g - 1), min(int(cy / s), g - 1)
        written = 0
        for ring in range(5):
            for dy in range(-ring, ring + 1):
                for dx in range(-ring, ring + 1):
                    gx, gy = gx0 + dx, gy0 + dy
                    if (written >= want or max(abs(dx), abs(dy)) != ring
                            or not (0 <= gx < g and 0 <= gy < g)):
                        continue
                    a = level_start[level] + gy * g + gx
                    score = peak * (1 - 0.35 * ring / 4) \
                        - 0.05 * rng.uniform()
                    j = 0.03 * (2 * rng.uniform(size=4) - 1)
                    aa = ang + 0.05 * (2 * rng.uniform() - 1)
                    if aa >= hi:
                        aa -= np.pi
                    elif aa < lo:
                        aa += np.pi
                    t[a, 0:4] = (cx + w * j[0], cy + h * j[1],
                                 w * (1 + j[2]), h * (1 + j[3]))
                    t[a, 4 + c] = aa
                    t[a, 4 + k] = score
                    if k2 >= 0 and written % 3 == 0:
                        t[a, 4 + k2] = 0.5 * score
                    written += 1
    return np.ascontiguousarray(t.astype(np.float32).T)[None]


def lane_frame(rng, n=LANE_N, S=LANE_S):
    """A LaneATT-like [1, n, 5 + S] float32 tensor (see the docstring)."""
    w, h = LANE_MODEL
    rows = S - 1
    t = np.arange(S, dtype=np.float64) / rows        # 0: bottom row
    out = np.zeros((n, 5 + S), np.float64)
    k = int(rng.integers(2, 5))                      # lanes
    vpx, vpt = w * rng.uniform(0.42, 0.58), rng.uniform(0.55, 0.65)
    x0 = np.sort(rng.uniform(-0.2, 1.2, k)) * w      # x at the bottom row
    bend = rng.normal(0, 25, k)
    dup = [int(rng.integers(10, 41)) for _ in range(k)]
    j = 0
    for q in range(k):
        tt = np.minimum(t, vpt) / vpt
        base = x0[q] + (vpx - x0[q]) * tt + bend[q] * tt * (1 - tt)
        r0 = int(rng.integers(0, 6))                 # start row of the lane
        length = vpt * rows - r0
        for _ in range(dup[q]):
            xs = base + rng.normal(0, rng.uniform(3, 8)) + \
                rng.normal(0, 1.5, S)
            r = max(0, r0 + int(rng.integers(-2, 3)))
            out[j, 0], out[j, 1] = rng.normal(0, 0.5), rng.uniform(2, 5)
            out[j, 2] = r / rows
            out[j, 4] = max(2.0, length + rng.normal(0, 3))
            out[j, 5:] = xs
            out[j, 3] = xs[r]
            j += 1
    while j < n:                                     # background proposals
        xb = rng.uniform(-0.5, 1.5) * w
        xt = rng.uniform(0, w)
        xs = xb + (xt - xb) * t + rng.normal(0, 0.1 * w) * t * (1 - t)
        r = int(rng.integers(0, rows + 1))
        out[j, 0] = rng.normal(0, 0.5)
        # about 5 % above 0.5, most far below
        out[j, 1] = out[j, 0] + (rng.uniform(0.05, 2.0)
                                 if rng.uniform() < 0.05
                                 else -rng.uniform(0.5, 6))
        out[j, 2] = r / rows
        out[j, 4] = rng.uniform(1, rows + 1 - r)
        out[j, 5:] = xs
        out[j, 3] = xs[r]
        j += 1
    return out[rng.permutation(n)].astype(np.float32)[None]


def obb_nms_boxes(boxes, rng):
    """[n, 5] cx cy w h angle from xyxy boxes, angle uniform in
    [-pi/2, pi/2)."""
    b = boxes.astype(np.float64)
    out = np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2,
                    b[:, 2] - b[:, 0], b[:, 3] - b[:, 1],
                    rng.uniform(-np.pi / 2, np.pi / 2, len(b))], 1)
    return out.astype(np.float32)


def seg_frame(rng):
    """[1, 116, 8400] and its prototypes [1, 32, 160, 160]."""
    t = frame(rng, False, SEG_OBJECTS, SEG_NOISE)[0]
    n = t.shape[1]
    coef = rng.normal(0, 1, (SEG_M, n))
    # an object's anchors (scoring anything above noise) share coefficients
    best = t[4:].max(0)
    order = np.argsort(-best)
    for a in order[:2000]:
        if best[a] < 0.3:
            break
        near = np.nonzero((np.abs(t[0] - t[0, a]) < 8)
                          & (np.abs(t[1] - t[1, a]) < 8))[0]
        coef[:, near] = coef[:, a:a + 1] + 0.05 * rng.normal(
            0, 1, (SEG_M, len(near)))
    y, x = np.meshgrid(np.arange(SEG_P), np.arange(SEG_P), indexing="ij")
    protos = np.empty((SEG_M, SEG_P, SEG_P))
    for m in range(SEG_M):
        fx, fy = rng.integers(1, 6, 2)
        px, py = rng.uniform(0, 2 * np.pi, 2)
        protos[m] = np.cos(fx * np.pi * x / SEG_P + px) \
            * np.cos(fy * np.pi * y / SEG_P + py)
    out = np.concatenate([t, coef], 0).astype(np.float32)[None]
    return out, protos.astype(np.float32)[None]


def pose_frame(rng):
    """[1, 56, 8400]: the yolov8 frame's boxes, one score, 17 keypoints."""
    t = frame(np.random.default_rng(SEED_FRAME["yolov8"]), False)[0]
    n = t.shape[1]
    out = np.zeros((5 + 3 * POSE_K, n), np.float32)
    out[:4] = t[:4]
    out[4] = t[4:].max(0)
    for j in range(POSE_K):
        out[5 + 3 * j] = t[0] + t[2] * rng.uniform(-0.5, 0.5, n)
        out[6 + 3 * j] = t[1] + t[3] * rng.uniform(-0.5, 0.5, n)
        out[7 + 3 * j] = rng.uniform(0, 1, n)
    return out[None]


def letterbox(w, h, model=MODEL):
    """ultralytics' letterbox of a w x h image into the model: (gain, pad x,
    pad y), the pads as its scale_boxes rounds them."""
    gain = min(model / h, model / w)
    return (gain, round((model - w * gain) / 2 - 0.1),
            round((model - h * gain) / 2 - 0.1))


def tiles_frames(rng):
    """The tiles input [B, 84, 8400] float32 (B = the slices + 1) and its
    slices: TILES_OBJECTS objects (w, h uniform in TILES_SIZES frame
    pixels, anywhere in the TILES_FRAME frame, 80 classes, three in ten
    with a second class) cut by SAHI's grid of TILES_SLICE slices
    (overlap TILES_OVERLAP), then the whole frame last. Each view is a
    YOLOv8 frame of the 640x640 model (frame_base's background with
    TILES_NOISE noise anchors) holding, for each object part inside it,
    a cluster of put_cluster's (10-60 anchors, a cell written once): the
    part in model pixels (a slice maps 1:1, the whole frame by its
    letterbox: 1/6 and a pad of 140 rows), scoring the object's peak
    (0.6..0.95) times 0.5 + 0.5 x the part's share of the object's area;
    a part under TILES_PART_LEAST pixels wide or high is not seen. The
    whole frame sees the objects of TILES_FULL_LEAST pixels and more
    (both sides), at TILES_FULL_SCORE times their peak."""
    fw, fh = TILES_FRAME
    slices = sahi_ref.slice_bboxes(fh, fw, TILES_SLICE, TILES_SLICE,
                                   TILES_OVERLAP, TILES_OVERLAP)
    n = TILES_OBJECTS
    wh = rng.uniform(TILES_SIZES[0], TILES_SIZES[1], (n, 2))
    x1 = rng.uniform(0, 1, n) * (fw - wh[:, 0])
    y1 = rng.uniform(0, 1, n) * (fh - wh[:, 1])
    objs = np.stack([x1, y1, x1 + wh[:, 0], y1 + wh[:, 1]], 1)
    cls = rng.integers(0, N_CLASSES, n)
    second = rng.uniform(size=n) < 0.3
    c2 = np.where(second, (cls + 1 + rng.integers(0, N_CLASSES - 1, n))
                  % N_CLASSES, -1)
    peak = 0.6 + 0.35 * rng.uniform(size=n)
    out = []
    for v, (sx1, sy1, sx2, sy2) in enumerate(slices + [[0, 0, fw, fh]]):
        whole = v == len(slices)
        gain, px, py = letterbox(sx2 - sx1, sy2 - sy1)
        t = frame_base(rng, False, TILES_NOISE)
        taken = np.zeros(len(t), bool)
        for k in range(n):
            a, b, c, d = objs[k]
            ix1, iy1 = max(a, sx1), max(b, sy1)
            ix2, iy2 = min(c, sx2), min(d, sy2)
            if whole:
                if min(c - a, d - b) < TILES_FULL_LEAST:
                    continue
                score = peak[k] * TILES_FULL_SCORE
            else:
                if min(ix2 - ix1, iy2 - iy1) < TILES_PART_LEAST:
                    continue
                seen = (ix2 - ix1) * (iy2 - iy1) / ((c - a) * (d - b))
                score = peak[k] * (0.5 + 0.5 * seen)
            mx1, my1 = (ix1 - sx1) * gain + px, (iy1 - sy1) * gain + py
            mx2, my2 = (ix2 - sx1) * gain + px, (iy2 - sy1) * gain + py
            put_cluster(t, rng, False, int(cls[k]), int(c2[k]),
                        ((mx1 + mx2) / 2, (my1 + my2) / 2, mx2 - mx1,
                         my2 - my1), score, int(rng.integers(10, 61)),
                        taken)
        out.append(np.ascontiguousarray(t.astype(np.float32).T))
    return np.stack(out), slices


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    boxes, scores, classes = nms_inputs(np.random.default_rng(SEED_NMS))
    np.save(os.path.join(out, "nms_boxes.npy"), boxes)
    np.save(os.path.join(out, "nms_scores.npy"), scores)
    np.save(os.path.join(out, "nms_classes.npy"), classes)
    np.save(os.path.join(out, "nms_obb_boxes.npy"),
            obb_nms_boxes(boxes, np.random.default_rng(SEED_OBB_ANGLES)))
    boxes, scores, _ = nms_inputs(np.random.default_rng(SEED_1M), N_1M)
    np.save(os.path.join(out, "nms_1m_boxes.npy"), boxes)
    np.save(os.path.join(out, "nms_1m_scores.npy"), scores)
    for name, seed in SEED_FRAME.items():
        t = frame(np.random.default_rng(seed), name == "yolov5")
        np.save(os.path.join(out, name + ".npy"), t)
    np.save(os.path.join(out, "yolov8_obb.npy"),
            obb_frame(np.random.default_rng(SEED_OBB)))
    np.save(os.path.join(out, "laneatt.npy"),
            lane_frame(np.random.default_rng(SEED_LANES)))
    t, protos = seg_frame(np.random.default_rng(SEED_SEG))
    np.save(os.path.join(out, "yolov8_seg.npy"), t)
    np.save(os.path.join(out, "yolov8_seg_protos.npy"), protos)
    np.save(os.path.join(out, "yolov8_pose.npy"),
            pose_frame(np.random.default_rng(SEED_POSE)))
    t, slices = tiles_frames(np.random.default_rng(SEED_TILES))
    np.save(os.path.join(out, "tiles.npy"), t)
    params = {"score_threshold": 0.25, "iou_frame": 0.45, "iou_nms": 0.5,
              "max_detections": 300, "max_candidates": 30000,
              "n_classes": N_CLASSES, "model": [MODEL, MODEL],
              "frame": [MODEL, MODEL], "letterbox": True,
              "objects": OBJECTS, "noise": NOISE, "n_max": N_MAX,
              "obb": {"model": [OBB_MODEL, OBB_MODEL],
                      "frame": [OBB_MODEL, OBB_MODEL], "letterbox": True,
                      "n_classes": OBB_CLASSES, "objects": OBB_OBJECTS,
                      "noise": OBB_NOISE, "score_threshold": 0.25,
                      "iou_frame": 0.45, "iou_nms": 0.5,
                      "max_detections": 300},
              "laneatt": {"model": list(LANE_MODEL), "frame": [1280, 720],
                          "letterbox": False, "n": LANE_N, "S": LANE_S,
                          "score_threshold": 0.5, "distance": 50.0,
                          "max_detections": 4},
              "yolov8_seg": {"n_classes": N_CLASSES, "coefficients": SEG_M,
                             "protos": [SEG_P, SEG_P],
                             "objects": SEG_OBJECTS, "noise": SEG_NOISE},
              "yolov8_pose": {"keypoints": POSE_K, "dims": 3},
              "tiles": {"frame": list(TILES_FRAME),
                        "slice": [TILES_SLICE, TILES_SLICE],
                        "overlap": TILES_OVERLAP, "slices": len(slices),
                        "full_frame": True, "batch": len(slices) + 1,
                        "model": [MODEL, MODEL], "letterbox": True,
                        "n_classes": N_CLASSES, "objects": TILES_OBJECTS,
                        "object_sizes": list(TILES_SIZES),
                        "part_least": TILES_PART_LEAST,
                        "full_frame_least": TILES_FULL_LEAST,
                        "full_frame_score": TILES_FULL_SCORE,
                        "noise": TILES_NOISE, "score_threshold": 0.25,
                        "iou": 0.45, "max_detections": 300,
                        "merge": "greedy-nmm", "merge_metric": "ios",
                        "merge_threshold": 0.5,
                        "merge_class_agnostic": False}}
    with open(os.path.join(out, "params.json"), "w") as f:
        json.dump(params, f, indent=1)
    print("gen_data: wrote %s" % out)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""cudanms-tool tiles (cnms_detect_tiles) on a tiled scene against an
independent pipeline: each slice's YOLOv8 tensor post-processed as a
detector does it (best class above the threshold, xywh to xyxy, the
model-to-slice scaling, clipped to the slice, torchvision's batched_nms,
score order), then SAHI's assembly and merge as the NumPy reference
(sahi_ref.py) reproduces them.

The scene: a 1280x1280 frame of 48 objects (8 to 150 pixels, 3 classes),
cut into 640x640 slices overlapping by 0.2 (a 3 x 3 grid) plus the whole
frame as a last slice (the model is 640x640: a slice maps 1:1, the frame
by 0.5). An object crossing slice edges is seen in two to four slices,
each time as its part inside the slice, with a score of its own (higher
for more of it seen), and once more, jittered and lower, as a duplicate
the slice's NMS removes; the whole frame sees the objects of 16 pixels
and more. Every merge rule, metric and class mode: the merged detections
must be the reference's exactly (count, order, boxes, scores, classes,
the keeping record).

    test_tiles.py CUDANMS_TOOL
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sahi_ref  # noqa: E402

try:
    import torch
    import torchvision
except ImportError:
    print("SKIP: no torch/torchvision for the slices' post-process")
    sys.exit(77)

FRAME = 1280
MODEL = 640
SLICE = 640
OVERLAP = 0.2
CLASSES = 3
SCORE = 0.25
IOU = 0.45


def scene(rng):
    """Objects [x1, y1, x2, y2] (integers), classes and base scores."""
    n = 48
    w = rng.integers(8, 151, n)
    h = rng.integers(8, 151, n)
    x1 = rng.integers(0, FRAME - w + 1)
    y1 = rng.integers(0, FRAME - h + 1)
    boxes = np.stack([x1, y1, x1 + w, y1 + h], axis=1)
    # scores that are exact float32 values well away from the threshold
    base = rng.integers(160, 250, n) / 256.0
    return boxes, rng.integers(0, CLASSES, n), base


def slice_rows(objs, cls, base, rect, gain, rng, least=0):
    """The anchors a detector gives for one slice (model coordinates):
    each object's part inside the slice rect, scaled by gain, with its own
    score, and a jittered, lower duplicate."""
    rows = []
    x0, y0, x1, y1 = rect
    for (a, b, c, d), k, s in zip(objs, cls, base):
        ix1, iy1 = max(a, x0), max(b, y0)
        ix2, iy2 = min(c, x1), min(d, y1)
        if ix2 <= ix1 or iy2 <= iy1 or min(c - a, d - b) < least:
            continue
        seen = (ix2 - ix1) * (iy2 - iy1) / float((c - a) * (d - b))
        score = np.float32(s * (0.5 + 0.5 * seen))
        # slice-local pixels, then model coordinates (exact: halves)
        bx = np.array([ix1 - x0, iy1 - y0, ix2 - x0, iy2 - y0], np.float64)
        m = bx * gain
        rows.append((m, int(k), score))
        j = rng.integers(-2, 3, 4) * gain
        rows.append((m + j, int(k), np.float32(score * 0.75)))
    return rows


def tensor_of(rows, n):
    """A YOLOv8 frame [4 + C, n]: cx cy w h and the class scores, the rows
    after the objects' left empty (scores 0)."""
    t = np.zeros((4 + CLASSES, n), np.float32)
    for i, (m, k, s) in enumerate(rows):
        t[0, i] = (m[0] + m[2]) / 2
        t[1, i] = (m[1] + m[3]) / 2
        t[2, i] = m[2] - m[0]
        t[3, i] = m[3] - m[1]
        t[4 + k, i] = s
    # a noise floor below the threshold
    t[4:, len(rows):] = 0.01
    return t


def post(t, gain, size):
    """A detector's post-process of frame t: [boxes, scores, classes] in
    slice pixels, score order (torchvision's batched_nms)."""
    sc = t[4:].max(axis=0)
    cl = t[4:].argmax(axis=0)
    keep = sc > SCORE
    cx, cy, w, h = (t[i][keep] for i in range(4))
    b = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    b = np.clip(b / np.float32(gain), 0, size).astype(np.float32)
    s = sc[keep]
    c = cl[keep]
    k = torchvision.ops.batched_nms(torch.from_numpy(b),
                                    torch.from_numpy(s.copy()),
                                    torch.from_numpy(c), IOU).numpy()
    return b[k].astype(np.float64), s[k].astype(np.float64), c[k]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tool = sys.argv[1]
    rng = np.random.default_rng(4242)
    objs, cls, base = scene(rng)
    slices = sahi_ref.slice_bboxes(FRAME, FRAME, SLICE, SLICE, OVERLAP,
                                   OVERLAP)
    per = [slice_rows(objs, cls, base, r, MODEL / SLICE, rng)
           for r in slices]
    full = slice_rows(objs, cls, base, (0, 0, FRAME, FRAME), MODEL / FRAME,
                      rng, least=16)
    n = max(len(r) for r in per + [full]) + 32
    frames = [tensor_of(r, n) for r in per] + [tensor_of(full, n)]
    batch = np.stack(frames)

    # the reference: each slice's post-process, SAHI's assembly
    preds = [post(f, MODEL / SLICE, SLICE) for f in frames[:-1]]
    fpred = post(frames[-1], MODEL / FRAME, FRAME)
    boxes, scores, classes = [], [], []
    for (x0, y0, _, _), (b, s, c) in zip(slices + [[0, 0, 0, 0]],
                                         preds + [fpred]):
        fb, kept = sahi_ref.slice_to_frame(b, (x0, y0), FRAME, FRAME)
        boxes.extend(fb.tolist())
        scores.extend(s[kept].tolist())
        classes.extend(c[kept].tolist())
    seen = sum(len(p[1]) for p in preds)
    crossing = sum(1 for o in objs
                   if sum(1 for r in slices if o[0] < r[2] and o[2] > r[0]
                          and o[1] < r[3] and o[3] > r[1]) > 1)

    failed = 0
    runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tiles.npy")
        np.save(path, batch)
        for rule in ("greedy-nmm", "nmm", "nms"):
            for metric in ("ios", "iou"):
                for agnostic in (False, True):
                    b, s, c, g = sahi_ref.merge(boxes, scores, classes, rule,
                                                metric, 0.5, agnostic,
                                                return_groups=True)
                    cmd = [tool, "tiles", "--tensor", path,
                           "--model-size", "%dx%d" % (MODEL, MODEL),
                           "--frame-size", "%dx%d" % (FRAME, FRAME),
                           "--slice-size", "%dx%d" % (SLICE, SLICE),
                           "--slice-overlap", str(OVERLAP),
                           "--slice-full-frame", "--score-threshold",
                           str(SCORE), "--iou", str(IOU), "--merge", rule,
                           "--merge-metric", metric, "--merge-threshold",
                           "0.5"]
                    if agnostic:
                        cmd.append("--merge-class-agnostic")
                    out = subprocess.run(cmd, capture_output=True,
                                         text=True)
                    runs += 1
                    if out.returncode != 0:
                        print("FAIL %s: %s" % (" ".join(cmd), out.stderr))
                        failed += 1
                        continue
                    got = [json.loads(x) for x in out.stdout.splitlines()]
                    f = np.float32
                    want = [{"x": f(b[k][0]), "y": f(b[k][1]),
                             "w": f(f(b[k][2]) - f(b[k][0])),
                             "h": f(f(b[k][3]) - f(b[k][1])),
                             "confidence": f(s[k]), "label_id": int(c[k]),
                             "anchor": g[k][0]} for k in range(len(s))]
                    ok = len(got) == len(want) and all(
                        all(f(gg[key]) == ww[key] for key in
                            ("x", "y", "w", "h", "confidence"))
                        and gg["label_id"] == ww["label_id"]
                        and gg["anchor"] == ww["anchor"]
                        for gg, ww in zip(got, want))
                    merged = sum(len(x[1]) for x in g)
                    dropped = sum(len(x[2]) for x in g)
                    print("tiles %s %s %s: %d records of %d slices -> %d "
                          "detections (%d merged, %d dropped): %s"
                          % (rule, metric, "agnostic" if agnostic else
                             "by class", len(scores), len(slices) + 1,
                             len(want), merged, dropped,
                             "identical" if ok else "DIFFERENT"))
                    if not ok:
                        failed += 1
                        for k in range(max(len(got), len(want))):
                            gg = got[k] if k < len(got) else None
                            ww = want[k] if k < len(want) else None
                            if gg is None or ww is None or gg != {
                                    key: (float(v) if key not in (
                                        "label_id", "anchor") else v)
                                    for key, v in ww.items()}:
                                print("  first difference at %d:\n  got  "
                                      "%s\n  want %s" % (k, gg, ww))
                                break
    print("tiles: %d objects (%d across slice edges), %d slice records, "
          "%d runs, %d failed" % (len(objs), crossing, seen, runs, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

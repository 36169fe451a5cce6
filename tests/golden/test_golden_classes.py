#!/usr/bin/python3
"""Golden test of the per-class controls: cudanms-tool decode with
per-class score thresholds, IoUs, caps (each class's and one for every
class), keep-only and drop filters and a minimum box size, against a reference written for the test: a NumPy
decode of the YOLOv8 tensor (float32, the same operations), then, as the
written rule says, filter (each class's threshold, the box size), then
torchvision.ops.nms per class with that class's IoU, merged by (score
desc, anchor asc), then each class's cap in that order, then the frame's.

usage: test_golden_classes.py CUDANMS_TOOL WORKDIR [--cases N] [--seed S]
    [--backend cpu|cuda]

Scores are continuous (no ties), model = frame (the map is the identity).
Exit 77 when torchvision is missing.
"""

import argparse
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
    from torchvision.ops import nms as tv_nms
except ImportError as e:  # pragma: no cover - depends on the machine
    print("golden-classes: skipped, torchvision is not importable: %s" % e)
    sys.exit(77)

F = np.float32
SIZE = 640


def make_case(rng, i):
    """A YOLOv8 [1, 4+C, N] tensor with clusters of boxes, and controls."""
    c = int(rng.integers(1, 9))
    n = int(rng.integers(1, 400))
    centres = rng.uniform(0, SIZE, size=(int(rng.integers(1, 12)), 2))
    k = rng.integers(0, len(centres), size=n)
    cx = centres[k, 0] + rng.normal(0, 8, n)
    cy = centres[k, 1] + rng.normal(0, 8, n)
    w = rng.uniform(4, 120, n)
    h = rng.uniform(4, 120, n)
    t = np.zeros((1, 4 + c, n), F)
    t[0, 0], t[0, 1], t[0, 2], t[0, 3] = cx, cy, w, h
    t[0, 4:] = (rng.uniform(0, 1, (c, n)) ** 3).astype(F)
    ctl = {"iou": float(F(rng.choice([0.3, 0.45, 0.5, 0.7]))),
           "thr": float(F(0.05 * int(rng.integers(1, 6)))),
           "max_det": int(rng.choice([300, 300, 7])),
           "thrs": {}, "ious": {}, "caps": {}, "keep": None, "drop": [],
           "min_w": 0.0, "min_h": 0.0,
           "per_class": int(rng.choice([0, 0, 0, 1, 2, 5]))}
    for cls in range(c):
        r = rng.random()
        if r < 0.3:
            ctl["thrs"][cls] = float(F(0.05 * int(rng.integers(1, 12))))
        if rng.random() < 0.3:
            ctl["ious"][cls] = float(F(rng.choice([0.2, 0.4, 0.6, 0.8])))
        if rng.random() < 0.2:
            ctl["caps"][cls] = int(rng.integers(1, 4))
    if c > 1 and i % 4 == 1:
        ctl["keep"] = sorted(set(int(x) for x in rng.integers(0, c, 2)))
    if c > 1 and i % 4 == 2:
        ctl["drop"] = [int(rng.integers(0, c))]
    if i % 3 == 0:
        ctl["min_w"] = float(int(rng.integers(0, 40)))
        ctl["min_h"] = float(int(rng.integers(0, 40)))
    return t, ctl


def reference(t, ctl):
    """The kept (anchor, class, score, box) list by the written rule."""
    c = t.shape[1] - 4
    cls = np.argmax(t[0, 4:], axis=0)       # the first maximum
    score = t[0, 4:].max(axis=0)
    hw = t[0, 2] * F(0.5)
    hh = t[0, 3] * F(0.5)
    box = np.stack([t[0, 0] - hw, t[0, 1] - hh, t[0, 0] + hw,
                    t[0, 1] + hh], 1).astype(F)
    box = np.minimum(np.maximum(box, F(0)), F(SIZE))
    thr = np.full(c, F(ctl["thr"]), F)
    for k, v in ctl["thrs"].items():
        thr[k] = F(v)
    if ctl["keep"] is not None:
        mask = np.full(c, True)
        mask[ctl["keep"]] = False
        thr[mask] = np.inf
        for k, v in ctl["thrs"].items():
            if k in ctl["keep"]:
                thr[k] = F(v)
    for k in ctl["drop"]:
        thr[k] = np.inf
    ok = (score > thr[cls]) & (box[:, 2] > box[:, 0]) & (box[:, 3] > box[:, 1])
    ok &= ((box[:, 2] - box[:, 0]) >= F(ctl["min_w"]))
    ok &= ((box[:, 3] - box[:, 1]) >= F(ctl["min_h"]))
    kept = []
    for k in range(c):
        idx = np.nonzero(ok & (cls == k))[0]
        if len(idx) == 0:
            continue
        iou = ctl["ious"].get(k, ctl["iou"])
        keep = tv_nms(torch.from_numpy(box[idx]), torch.from_numpy(score[idx]),
                      iou).numpy()
        kept += [int(idx[j]) for j in keep]
    kept.sort(key=lambda a: (-score[a], a))
    out, per = [], {}
    for a in kept:
        k = int(cls[a])
        per[k] = per.get(k, 0) + 1
        cap = ctl["caps"].get(k, ctl["per_class"])
        if cap > 0 and per[k] > cap:
            continue
        out.append(a)
    out = out[:ctl["max_det"]]
    return [(int(cls[a]), float(score[a]), tuple(float(v) for v in box[a]))
            for a in out]


def run_tool(tool, path, ctl, backend):
    args = [tool, "decode", "--tensor", path, "--layout", "yolov8",
            "--model-size", "%dx%d" % (SIZE, SIZE),
            "--frame-size", "%dx%d" % (SIZE, SIZE),
            "--score-threshold", repr(ctl["thr"]), "--iou", repr(ctl["iou"]),
            "--max-detections", str(ctl["max_det"]), "--backend", backend]
    if ctl["thrs"]:
        args += ["--class-score-thresholds",
                 ",".join("%d=%r" % kv for kv in ctl["thrs"].items())]
    if ctl["ious"]:
        args += ["--class-ious",
                 ",".join("%d=%r" % kv for kv in ctl["ious"].items())]
    if ctl["caps"]:
        args += ["--class-max-detections",
                 ",".join("%d=%d" % kv for kv in ctl["caps"].items())]
    if ctl["keep"] is not None:
        args += ["--keep-classes", ",".join(str(k) for k in ctl["keep"])]
    if ctl["drop"]:
        args += ["--drop-classes", ",".join(str(k) for k in ctl["drop"])]
    if ctl["per_class"]:
        args += ["--max-detections-per-class", str(ctl["per_class"])]
    if ctl["min_w"] or ctl["min_h"]:
        args += ["--min-width", repr(ctl["min_w"]),
                 "--min-height", repr(ctl["min_h"])]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("cudanms-tool failed: %s\n%s" % (" ".join(args),
                                                          r.stderr))
    out = []
    for line in r.stdout.splitlines():
        d = json.loads(line)
        x, y = F(d["x"]), F(d["y"])
        out.append((d["label_id"], float(F(d["confidence"])),
                    (float(x), float(y), float(F(x + F(d["w"]))),
                     float(F(y + F(d["h"]))))))
    return out, args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("workdir")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--backend", default="cpu")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    bad = kept_total = 0
    for i in range(a.cases):
        t, ctl = make_case(rng, i)
        path = os.path.join(a.workdir, "classes-%d.npy" % i)
        np.save(path, t)
        want = reference(t, ctl)
        got, args = run_tool(a.tool, path, ctl, a.backend)
        kept_total += len(want)
        # the box's x2, y2 come back as x + w: compare classes, scores
        # and x1 y1 exactly, x2 y2 to the float the tool's w adds up to
        same = len(got) == len(want) and all(
            g[0] == w[0] and g[1] == w[1] and g[2][:2] == w[2][:2]
            and abs(g[2][2] - w[2][2]) <= 1e-3 and
            abs(g[2][3] - w[2][3]) <= 1e-3 for g, w in zip(got, want))
        if not same:
            bad += 1
            if bad <= 3:
                print("case %d differs: %s\n  want %s\n  got  %s" % (
                    i, " ".join(args), want[:6], got[:6]))
        os.unlink(path)
    print("golden-classes: %d/%d cases identical to the reference (%d "
          "detections kept in all); backend %s" % (a.cases - bad, a.cases,
                                                   kept_total, a.backend))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

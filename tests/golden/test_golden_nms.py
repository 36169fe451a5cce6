#!/usr/bin/python3
"""Golden test: cudanms-tool nms against Debian's torchvision.

usage: test_golden_nms.py CUDANMS_TOOL WORKDIR [--cases N] [--seed S] [--backend cpu|cuda]

Every case is checked twice through the CLI: class-agnostic against
torchvision.ops.nms, and class-aware against torchvision.ops.nms run per
class with the per-class keep lists merged by (score desc, index asc).
batched_nms is deliberately not used: its coordinate-offset trick changes
the float arithmetic, and its final sort is not stable across classes.
The keep lists must be identical. Exit 77 when torchvision is missing.

Threshold: cudanms compares IoU > iou in float32 with the threshold
rounded once to float32. torchvision's CPU kernel compares the float IoU
with the double threshold. The two differ only when an IoU equals
float32(iou) exactly and float32(iou) > iou (0.3 is such a value), so
torchvision is given float(np.float32(iou)), which makes its comparison
cudanms's. How many checks the unrounded double threshold would
change is printed as a note.
"""

import argparse
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torchvision
    from torchvision.ops import nms as tv_nms
except ImportError as e:  # pragma: no cover - depends on the machine
    print("golden: skipped, torchvision is not importable: %s" % e)
    sys.exit(77)

# The case generator is shared with tests/gpu/test_golden_cuda.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from golden_cases import IOUS, fill_case, merge_per_class  # noqa: E402


def make_case(rng, i):
    """One seeded random case: boxes, scores, classes, iou and a label."""
    # Sizes cover 1..8192, weighted towards the small end where most
    # corner cases live, with a few large ones.
    if i < 8:
        n = i + 1
    elif i % 8 == 7:
        n = int(rng.integers(4096, 8193))
    else:
        n = int(np.exp(rng.uniform(0, np.log(4096))))
    iou = IOUS[i % 3]
    large = i % 5 == 4
    span = 60000.0 if large else float(rng.choice([64.0, 640.0, 1920.0]))
    boxes, scores, classes, ties = fill_case(rng, i, n, span)
    # both integer widths go through the CLI
    classes = classes.astype(np.int64 if i % 2 else np.int32)
    label = "case %d: n=%d iou=%.1f span=%g ties=%s" % (i, n, iou, span, ties)
    return boxes, scores, classes, iou, label


def torchvision_keep(boxes, scores, classes, iou):
    tb = torch.from_numpy(boxes)
    ts = torch.from_numpy(scores)
    if classes is None:
        return tv_nms(tb, ts, iou).tolist()
    return merge_per_class(scores, classes,
                           lambda idx: tv_nms(tb[idx], ts[idx], iou).numpy())


def cli_keep(tool, workdir, boxes, scores, classes, iou, backend):
    bp = os.path.join(workdir, "boxes.npy")
    sp = os.path.join(workdir, "scores.npy")
    cp = os.path.join(workdir, "classes.npy")
    kp = os.path.join(workdir, "keep.npy")
    np.save(bp, boxes)
    np.save(sp, scores)
    args = [tool, "nms", "--boxes", bp, "--scores", sp, "--iou", repr(iou),
            "--backend", backend, "--out", kp]
    if classes is not None:
        np.save(cp, classes)
        args += ["--classes", cp]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("cudanms-tool failed (%d): %s"
                           % (r.returncode, r.stderr.strip()))
    keep = np.load(kp)
    assert keep.dtype == np.int64, keep.dtype
    return keep.tolist()


def first_difference(a, b):
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return k
    return min(len(a), len(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("workdir")
    ap.add_argument("--cases", type=int, default=240)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--backend", default="cpu")
    a = ap.parse_args()

    torch.set_num_threads(1)
    os.makedirs(a.workdir, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="golden-", dir=a.workdir)
    rng = np.random.default_rng(a.seed)
    ok = 0
    failures = []
    double_notes = []
    for i in range(a.cases):
        boxes, scores, classes, iou, label = make_case(rng, i)
        same = True
        iou32 = float(np.float32(iou))
        for mode, cls in (("agnostic", None), ("per-class", classes)):
            want = torchvision_keep(boxes, scores, cls, iou32)
            if torchvision_keep(boxes, scores, cls, iou) != want:
                double_notes.append((label, mode))
            got = cli_keep(a.tool, workdir, boxes, scores, cls, iou,
                           a.backend)
            if got != want:
                same = False
                if not failures:
                    k = first_difference(got, want)
                    print("golden: MISMATCH %s, %s: %d kept vs torchvision %d;"
                          " first difference at position %d: cudanms %s,"
                          " torchvision %s" % (
                              label, mode, len(got), len(want), k,
                              got[k:k + 5], want[k:k + 5]))
                    for j in (got[k:k + 1] + want[k:k + 1]):
                        print("  box %d: %s score %r class %d" % (
                            j, boxes[j].tolist(), float(scores[j]),
                            int(classes[j])))
                failures.append((label, mode))
        ok += same
    print("golden: %d/%d cases identical to torchvision %s "
          "(nms + per-class nms)" % (ok, a.cases, torchvision.__version__))
    if double_notes:
        print("golden: note: with the unrounded double threshold, torchvision"
              " differs in %d checks (an IoU equal to float32(iou)), first:"
              " %s, %s" % ((len(double_notes),) + double_notes[0]))
    if failures:
        print("golden: %d mismatching checks, first: %s" % (
            len(failures), failures[0]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

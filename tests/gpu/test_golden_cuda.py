#!/usr/bin/env python3
"""torchvision CUDA golden test for `cudanms-tool nms --backend cuda`.

usage: test_golden_cuda.py CUDANMS_TOOL [--cases N] [--seed S] [--workdir DIR]
                      [--backend cuda|cpu]

Not a meson test: run it by hand on the GPU host with a python3 that has
torch and torchvision with CUDA (torch 2.11 / torchvision 0.26 there), in
a shell without the GStreamer environment of .gpuhost/activate.sh.

It writes every case (boxes float32 [N,4], scores float32 [N], classes
int32 [N]) as .npy under the work directory, runs the CLI on it twice and
compares the keep lists with torchvision on CUDA tensors:
  - class-agnostic: torchvision.ops.nms;
  - class-aware (--classes): torchvision.ops.nms per class, the per-class
    keep lists merged by (score desc, index asc). batched_nms is not used:
    its coordinate-offset trick changes the float arithmetic.
torchvision's CUDA kernel rounds the threshold to float32 (devIoU takes a
float), as cudanms does; its CPU kernel (--torch-device cpu, a dry run
without a GPU) compares with the double, so torchvision is always given
float(np.float32(iou)), which is the same threshold for both.

Two ways torchvision CUDA can legitimately differ are diagnosed on the
first mismatch, and counted:
  - tie order: its scores.sort(descending=True) is not asked to be stable,
    while cudanms orders equal scores by index;
  - FMA contraction: torchvision's kernel is compiled with nvcc's default
    --fmad=true, so `Sa + Sb - interS` may be computed as one fma; the
    deciding pair's IoU is printed computed exactly (as cudanms does) and
    with the contractions nvcc may apply.
Prints one summary line; exit 0 when every check matches, 1 otherwise,
77 when torch/CUDA is missing.
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
except ImportError as e:  # depends on the machine
    print("golden-cuda: skipped, torch/torchvision not importable: %s" % e)
    sys.exit(77)

# The case generator is shared with tests/golden/test_golden_nms.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "common"))
from golden_cases import IOUS, fill_case, merge_per_class  # noqa: E402

MAX_N = 32768


def make_case(rng, i):
    """Case i: boxes, scores, classes, iou, a label and whether it has ties."""
    if i < 8:
        n = i + 1
    elif i % 10 == 9:
        n = MAX_N
    elif i % 10 == 8:
        n = int(rng.integers(8192, MAX_N + 1))
    else:
        n = int(np.exp(rng.uniform(0, np.log(8192))))
    iou = IOUS[i % 3]
    span = float(rng.choice([64.0, 640.0, 1920.0, 8000.0]))
    if n > 8192:
        # large cases stay dense: plenty of suppression across tiles
        span = float(rng.choice([640.0, 1920.0]))
    boxes, scores, classes, ties = fill_case(rng, i, n, span)
    label = "case %d: n=%d iou=%.1f span=%g ties=%s classes=%d" % (
        i, n, iou, span, ties, len(np.unique(classes)))
    return boxes, scores, classes, iou, label


def stable_order(scores):
    """cudanms's order: score descending, index ascending."""
    return np.lexsort((np.arange(len(scores)), -scores.astype(np.float64)))


def tv_keep(boxes_d, scores_d, scores, classes, iou):
    """torchvision on CUDA tensors; per class + merge when classes given."""
    if classes is None:
        return tv_nms(boxes_d, scores_d, iou).cpu().tolist()

    def keep_of(idx):
        idx_d = torch.from_numpy(idx).to(boxes_d.device)
        return tv_nms(boxes_d[idx_d], scores_d[idx_d], iou).cpu().numpy()
    return merge_per_class(scores, classes, keep_of)


def torch_sort_breaks_ties(scores_d, scores, classes):
    """Whether torch's CUDA sort (as torchvision calls it) orders some equal
    scores differently from (score desc, index asc), over the whole input
    or any per-class subset."""
    def differs(sub_d, sub):
        got = torch.sort(sub_d, descending=True)[1].cpu().numpy()
        return not np.array_equal(got, stable_order(sub))
    if differs(scores_d, scores):
        return True
    if classes is not None:
        for c in np.unique(classes):
            idx = np.nonzero(classes == c)[0]
            idx_d = torch.from_numpy(idx).to(scores_d.device)
            if differs(scores_d[idx_d], scores[idx]):
                return True
    return False


def cli_keep(tool, paths, iou, backend, with_classes):
    args = [tool, "nms", "--boxes", paths["boxes"], "--scores",
            paths["scores"], "--iou", repr(iou), "--backend", backend,
            "--out", paths["keep"]]
    if with_classes:
        args += ["--classes", paths["classes"]]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("cudanms-tool failed (%d): %s"
                           % (r.returncode, r.stderr.strip()))
    keep = np.load(paths["keep"])
    assert keep.dtype == np.int64, keep.dtype
    return keep.tolist()


# --- diagnosis of a mismatch ---------------------------------------------

f32 = np.float32


def fma32(a, b, c):
    """float32 fma(a, b, c), via float64 (a*b is exact there)."""
    return f32(np.float64(a) * np.float64(b) + np.float64(c))


def iou_variants(a, b):
    """IoU of kept box a and later box b: exact float32 (cudanms), and the
    fma contractions nvcc may apply to torchvision's devIoU."""
    a = [f32(v) for v in a]
    b = [f32(v) for v in b]
    w = max(f32(min(a[2], b[2]) - max(a[0], b[0])), f32(0))
    h = max(f32(min(a[3], b[3]) - max(a[1], b[1])), f32(0))
    inter = f32(w * h)
    da, db = (f32(a[2] - a[0]), f32(a[3] - a[1])), (f32(b[2] - b[0]),
                                                     f32(b[3] - b[1]))
    sa, sb = f32(da[0] * da[1]), f32(db[0] * db[1])
    out = {}
    den = f32(f32(sa + sb) - inter)
    out["exact"] = f32(0) if den == 0 else f32(inter / den)
    # Sa + Sb contracted with Sb's product, and/or - interS with w*h
    sab_fma = fma32(db[0], db[1], sa)
    for name, s in (("fma(Sb)", sab_fma), ("plain", f32(sa + sb))):
        for name2, d in (("fma(-inter)", fma32(-w, h, s)),
                         ("sub", f32(s - inter))):
            if name == "plain" and name2 == "sub":
                continue
            out[name + "+" + name2] = (f32(inter / d) if d != 0
                                       else f32("nan"))
    return out


def explain(boxes, scores, classes, got, want, iou, label, mode):
    k = 0
    while k < min(len(got), len(want)) and got[k] == want[k]:
        k += 1
    print("golden-cuda: MISMATCH %s, %s: cudanms keeps %d, torchvision %d;"
          " first difference at position %d: cudanms %s, torchvision %s" % (
              label, mode, len(got), len(want), k, got[k:k + 5],
              want[k:k + 5]))
    thr = f32(iou)
    for j, kept_by, dropped_by in (
            (got[k] if k < len(got) else None, "cudanms", "torchvision"),
            (want[k] if k < len(want) else None, "torchvision", "cudanms")):
        if j is None:
            continue
        print("  box %d %s score %r class %d: kept by %s, dropped by %s" % (
            j, boxes[j].tolist(), float(scores[j]), int(classes[j]), kept_by,
            dropped_by))
        # the kept boxes ahead of j, in the list that dropped j, that
        # overlap it: one of them decided the difference
        dropper = want if dropped_by == "torchvision" else got
        for i in dropper:
            if (-scores[i], i) >= (-scores[j], j):
                break
            if mode == "per-class" and classes[i] != classes[j]:
                continue
            v = iou_variants(boxes[i], boxes[j])
            if any(x > thr or x == thr for x in v.values()):
                print("    vs kept box %d %s score %r: IoU %s (threshold %r)"
                      % (i, boxes[i].tolist(), float(scores[i]),
                         ", ".join("%s=%r%s" % (n, float(x),
                                                " >" if x > thr else "")
                                   for n, x in v.items()), float(thr)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--cases", type=int, default=240)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--backend", default="cuda")
    # cpu: a dry run of this script on a machine without a GPU
    ap.add_argument("--torch-device", default="cuda")
    a = ap.parse_args()

    if a.torch_device == "cuda" and not torch.cuda.is_available():
        print("golden-cuda: skipped, torch sees no CUDA device")
        return 77
    dev = torch.device(a.torch_device)
    workdir = a.workdir or tempfile.mkdtemp(prefix="cnms-golden-cuda-")
    os.makedirs(workdir, exist_ok=True)
    rng = np.random.default_rng(a.seed)

    identical = 0
    checks = 0
    failures = []
    tie_cases = 0
    tie_failures = 0
    biggest = 0
    for i in range(a.cases):
        boxes, scores, classes, iou, label = make_case(rng, i)
        biggest = max(biggest, len(scores))
        stem = os.path.join(workdir, "case%04d" % i)
        paths = {k: "%s_%s.npy" % (stem, k)
                 for k in ("boxes", "scores", "classes", "keep")}
        np.save(paths["boxes"], boxes)
        np.save(paths["scores"], scores)
        np.save(paths["classes"], classes)
        boxes_d = torch.from_numpy(boxes).to(dev)
        scores_d = torch.from_numpy(scores).to(dev)
        unstable = torch_sort_breaks_ties(scores_d, scores, classes)
        tie_cases += unstable

        same = True
        for mode, cls in (("agnostic", None), ("per-class", classes)):
            checks += 1
            want = tv_keep(boxes_d, scores_d, scores, cls,
                           float(np.float32(iou)))
            got = cli_keep(a.tool, paths, iou, a.backend, cls is not None)
            if got == want:
                continue
            same = False
            tie_failures += unstable
            if not failures:
                explain(boxes, scores, classes, got, want, iou, label, mode)
                if unstable:
                    print("  note: torch's CUDA sort orders equal scores "
                          "differently from (score desc, index asc) here")
            failures.append((label, mode))
        identical += same

    print("golden-cuda: %d/%d cases identical to torchvision %s %s "
          "(nms + per-class nms; N up to %d, iou %s); %d/%d checks differ "
          "(%d in cases where torch's sort breaks ties differently; "
          "such cases: %d); backend %s; cases in %s" % (
              identical, a.cases, torchvision.__version__,
              a.torch_device.upper(), biggest,
              "/".join(str(x) for x in IOUS), len(failures), checks,
              tie_failures, tie_cases, a.backend, workdir))
    if failures:
        print("golden-cuda: first mismatching check: %s, %s"
              % failures[0])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

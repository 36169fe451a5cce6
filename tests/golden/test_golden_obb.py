#!/usr/bin/python3
"""Golden test of oriented-box NMS: cnms_nms_rotated (through
golden-obb-run) against a reference written for the test: shapely
polygon intersection in float64 and a plain greedy loop of the written
rule (score desc, index asc; a kept box suppresses a later one of its
class, any class when agnostic, iff IoU > iou; a box without positive
w and h overlaps nothing; a box or score that is not finite takes no
part).

usage: test_golden_obb.py GOLDEN_OBB_RUN WORKDIR [--cases N] [--seed S]
    [--backend cpu|cuda]

Hand-made cases first: IoUs computed by hand (axis-aligned boxes, where
float32 is exact, to the last bit; a square and the same square turned
45 degrees, IoU 1/sqrt(2); one box inside another; identical boxes, a box
turned 90 degrees with w and h swapped, turned 180 degrees; touching
boxes; tiny boxes; boxes far from the origin), each bracketed by two
thresholds around the known value. Then seeded random sets (clusters of
near-duplicates at every angle, background boxes, ties, zero-size boxes,
1 to 15 classes, thresholds 0.1 to 0.9), class-aware and agnostic: every
decision of cudanms must be the reference's, except where the decisive
pair's reference IoU lies within REL_TOL (1e-5, relative) of the
threshold (cudanms computes it in float32); those are counted, printed
and bounded. Exit 77 without shapely.
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import obb_common as oc  # noqa: E402

if oc.Polygon is None:
    print("golden-obb: skipped, shapely is not importable "
          "(apt-get install python3-shapely)")
    sys.exit(77)

import numpy as np  # noqa: E402

F = np.float32
IOUS = (0.1, 0.3, 0.45, 0.5, 0.7, 0.9)
# at most this many decisions in a run may sit within REL_TOL of the
# threshold and differ from the float64 reference
MAX_NEAR = 5

failures = []


def fail(msg):
    failures.append(msg)
    print("golden-obb: FAIL " + msg)


def f32_below(v):
    return float(np.nextafter(F(v), F(0)))


def pair(run, a, b, iou, classes=None, agnostic=True):
    """Is b (score 0.8) kept next to a (score 0.9)?"""
    keep = run.nms(np.array([a, b], F), np.array([0.9, 0.8], F), classes,
                   iou, agnostic)
    if keep[:1] != [0]:
        fail("pair %s %s: the first box is not kept first: %s" % (a, b, keep))
    return 1 in keep


def hand_cases(run):
    """(name, a, b, exact IoU, how): how = 'exact' (float32 arithmetic is
    exact: the IoU is float32(v) to the bit), 'rel' (within 1e-6 of v),
    'ref' (v is the float64 reference's own value of the float32 inputs,
    checked against the closed form to 1e-4; cudanms within REL_TOL)."""
    r = math.hypot(50.0, 0.0)
    th = 0.4
    far = (F(100000.5), F(200000.0))
    cases = [
        ("axis-aligned, half overlap", (0, 0, 4, 4, 0), (2, 0, 4, 4, 0),
         1.0 / 3.0, "exact"),
        ("axis-aligned, both shifted", (0, 0, 8, 8, 0), (2, 2, 8, 8, 0),
         36.0 / 92.0, "exact"),
        ("axis-aligned, 4x2 in 8x8", (0, 0, 8, 8, 0), (1, 1, 4, 2, 0),
         8.0 / 64.0, "exact"),
        ("square and the square turned 45 degrees", (0, 0, 10, 10, 0),
         (0, 0, 10, 10, math.pi / 4), 1.0 / math.sqrt(2.0), "rel"),
        ("square and the square turned 45 degrees, far out",
         (3000, -2000, 10, 10, 0.25), (3000, -2000, 10, 10, 0.25 + math.pi / 4),
         1.0 / math.sqrt(2.0), "rel"),
        ("one inside another, turned", (50, 50, 20, 10, 0.5),
         (51, 50, 4, 2, 1.2), 8.0 / 200.0, "rel"),
        ("identical", (10, 20, 8, 4, 0.3), (10, 20, 8, 4, 0.3), 1.0, "rel"),
        ("turned 90 degrees, w and h swapped", (10, 20, 8, 4, 0.3),
         (10, 20, 4, 8, 0.3 + math.pi / 2), 1.0, "rel"),
        ("turned 180 degrees", (10, 20, 8, 4, 0.3),
         (10, 20, 8, 4, 0.3 + math.pi), 1.0, "rel"),
        ("tiny, shifted by half along u", (0.01, 0.02, 1e-3, 5e-4, th),
         (0.01 + 5e-4 * math.cos(th), 0.02 + 5e-4 * math.sin(th), 1e-3, 5e-4,
          th), 1.0 / 3.0, "ref"),
        ("far from the origin, shifted by half along u",
         (far[0], far[1], 100, 50, th),
         (far[0] + F(50 * math.cos(th)), far[1] + F(50 * math.sin(th)), 100,
          50, th), 1.0 / 3.0, "ref"),
        ("turned 30 degrees, shifted by a quarter along v",
         (300, 200, 40, r, math.pi / 6),
         (300 - 0.25 * r * math.sin(math.pi / 6),
          200 + 0.25 * r * math.cos(math.pi / 6), 40, r, math.pi / 6),
         0.75 / 1.25, "ref"),
    ]
    for name, a, b, v, how in cases:
        a, b = np.array(a, F), np.array(b, F)
        bx = oc.Boxes(np.stack([a, b]))
        ref = bx.iou(0, 1)
        # the reference's own error: none where the inputs are exact;
        # float32 angles (0.3 + pi/2 rounded) move an IoU of 1 by ~1e-7
        closeness = {"exact": 1e-12, "rel": 1e-6, "ref": 1e-4}[how]
        if abs(ref - v) > closeness * v:
            fail("%s: reference IoU %.12g, by hand %.12g" % (name, ref, v))
        want = ref if how == "ref" else v
        if how == "exact":
            lo, hi = f32_below(v), float(F(v))
        else:
            rel = oc.REL_TOL if how == "ref" else 1e-6
            lo, hi = want * (1 - rel), min(want * (1 + rel), 1.0)
        sup_lo = not pair(run, a, b, lo)
        kept_hi = pair(run, a, b, hi)
        print("golden-obb: %-50s IoU %.9f: suppressed at %.9g %s, kept at "
              "%.9g %s" % (name, want, lo, sup_lo, hi, kept_hi))
        if not (sup_lo and kept_hi):
            fail("%s: IoU %.9g not bracketed by (%.9g, %.9g]" % (
                name, want, lo, hi))

    # IoU 0: touching along an edge, at a corner; turned, along an edge
    zero = [("touching along an edge", (0, 0, 4, 4, 0), (4, 0, 4, 4, 0), 0.0),
            ("touching at a corner", (0, 0, 4, 4, 0), (4, 4, 4, 4, 0), 0.0),
            ("apart", (0, 0, 4, 4, 0), (5, 0, 4, 4, 0), 0.0),
            ("touching along an edge, turned 30 degrees",
             (100, 100, 4, 2, math.pi / 6),
             (100 + 4 * math.cos(math.pi / 6), 100 + 4 * math.sin(math.pi / 6),
              4, 2, math.pi / 6), 1e-6)]
    for name, a, b, at in zero:
        a, b = np.array(a, F), np.array(b, F)
        ref = oc.Boxes(np.stack([a, b])).iou(0, 1)
        kept = pair(run, a, b, at)
        print("golden-obb: %-50s IoU ref %.3g: kept at %g %s" % (
            name, ref, at, kept))
        if ref > 1e-9 or not kept:
            fail("%s: reference IoU %g, kept at iou %g: %s" % (
                name, ref, at, kept))

    # classes: the same box in two classes is kept class-aware, not agnostic
    a = np.array((10, 10, 6, 3, 0.7), F)
    if not pair(run, a, a, 0.5, np.array([1, 2], np.int32), agnostic=False):
        fail("identical boxes of two classes: the second suppressed, "
             "class-aware")
    if pair(run, a, a, 0.5, np.array([1, 2], np.int32), agnostic=True):
        fail("identical boxes of two classes: the second kept, agnostic")
    if pair(run, a, a, 0.5, np.array([3, 3], np.int32), agnostic=False):
        fail("identical boxes of one class: the second kept, class-aware")

    # a box without positive w and h is kept where its score puts it and
    # overlaps nothing; a box or score that is not finite takes no part
    boxes = np.array([(10, 10, 0, 4, 0), (10, 10, 8, 8, 0.2),
                      (10, 10, 4, -1, 0), (10, 10, 8, 8, np.nan),
                      (10, 10, 8, 8, 0.2), (10, 10, 8, 8, 0.2),
                      (10, 10, np.inf, 8, 0.2)], F)
    scores = np.array([0.95, 0.9, 0.85, 0.99, 0.8, np.nan, 0.97], F)
    keep = run.nms(boxes, scores, None, 0.0, True)
    print("golden-obb: zero-size and non-finite boxes: kept %s" % keep)
    if keep != [0, 1, 2]:
        fail("zero-size and non-finite boxes: kept %s, want [0, 1, 2]" % keep)
    keep = run.nms(boxes, scores, None, 0.0, True, max_det=2)
    if keep != [0, 1]:
        fail("max_det 2: kept %s, want [0, 1]" % keep)


def make_case(rng, i):
    """Seeded boxes [n, 5], scores, classes, iou, max_det and a label."""
    if i < 6:
        n = i + 1
    elif i % 10 == 9:
        n = int(rng.integers(1000, 1501))
    else:
        n = int(math.exp(rng.uniform(math.log(8), math.log(500))))
    iou = IOUS[i % len(IOUS)]
    span = float(rng.choice([64.0, 640.0, 2048.0]))
    origin = 1e5 if i % 9 == 8 else 0.0
    n_cls = int(rng.choice([1, 3, 15]))
    k = max(1, n // int(rng.integers(3, 30)))
    ow = np.exp(rng.uniform(math.log(span * 0.01), math.log(span * 0.15), k))
    oh = ow * np.exp(rng.uniform(-1.2, 1.2, k))
    oa = rng.uniform(-math.pi, math.pi, k)
    ocx, ocy = rng.uniform(0, span, k), rng.uniform(0, span, k)
    ocl = rng.integers(0, n_cls, k)

    obj = rng.integers(0, k, n)
    m = np.min([ow[obj], oh[obj]], 0)
    cx = ocx[obj] + rng.normal(0, 0.06, n) * m
    cy = ocy[obj] + rng.normal(0, 0.06, n) * m
    w = ow[obj] * np.exp(rng.normal(0, 0.06, n))
    h = oh[obj] * np.exp(rng.normal(0, 0.06, n))
    a = oa[obj] + rng.normal(0, 0.06, n)
    cls = ocl[obj].copy()
    u = rng.random(n)
    # the same rectangle written otherwise: turned 90 degrees with w, h
    # swapped, or turned 180 degrees
    turn = u < 0.1
    a[turn] += math.pi / 2
    w[turn], h[turn] = h[turn].copy(), w[turn].copy()
    a[(u >= 0.1) & (u < 0.15)] += math.pi
    # exact copies of the object's box
    same = (u >= 0.15) & (u < 0.2)
    cx[same], cy[same], w[same], h[same], a[same] = \
        ocx[obj][same], ocy[obj][same], ow[obj][same], oh[obj][same], \
        oa[obj][same]
    # background boxes anywhere, and some of another class
    bg = (u >= 0.2) & (u < 0.35)
    nb = int(bg.sum())
    cx[bg], cy[bg] = rng.uniform(0, span, nb), rng.uniform(0, span, nb)
    w[bg] = np.exp(rng.uniform(math.log(span * 0.01), math.log(span * 0.15),
                               nb))
    h[bg] = w[bg] * np.exp(rng.uniform(-1, 1, nb))
    a[bg] = rng.uniform(-math.pi, math.pi, nb)
    other = rng.random(n) < 0.15
    cls[other] = rng.integers(0, n_cls, int(other.sum()))
    if i % 5 == 1:   # axis-aligned angles, multiples of 90 degrees
        a = np.round(a / (math.pi / 2)) * (math.pi / 2)
    if i % 11 == 3:  # large angles: many turns
        a += 2 * math.pi * rng.integers(-20, 21, n)
    if i % 7 == 4:   # integer geometry
        cx, cy, w, h = np.round(cx), np.round(cy), np.maximum(np.round(w), 1), \
            np.maximum(np.round(h), 1)
    boxes = np.stack([cx + origin, cy + origin, w, h, a], 1).astype(F)
    if i % 13 == 5 and n > 2:  # zero-size boxes
        z = rng.integers(0, n, max(1, n // 20))
        boxes[z, 2 + int(rng.integers(0, 2))] = 0
    scores = rng.random(n)
    ties = i % 4 == 2
    if ties:
        scores = np.round(scores * 10) / 10
    scores = scores.astype(F)
    if i % 4 == 0 and n > 2:  # duplicates of box and score
        d = rng.integers(0, n, max(1, n // 10))
        s = rng.integers(0, n, len(d))
        boxes[d], scores[d] = boxes[s], scores[s]
    max_det = 5 if i % 8 == 6 else 0
    label = "case %d: n=%d iou=%.2f span=%g origin=%g classes=%d ties=%s " \
        "max_det=%d" % (i, n, iou, span, origin, n_cls, ties, max_det)
    return boxes, scores, cls.astype(np.int32), iou, max_det, label


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("workdir")
    ap.add_argument("--cases", type=int, default=120)
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--backend", default="cpu")
    a = ap.parse_args()
    run = oc.Runner(a.tool, a.workdir, a.backend)

    hand_cases(run)

    rng = np.random.default_rng(a.seed)
    checks = identical = decisions_near = 0
    near_all, ties_all = [], []
    for i in range(a.cases):
        boxes, scores, classes, iou, max_det, label = make_case(rng, i)
        iou32 = float(F(iou))
        bx = oc.Boxes(boxes)
        for mode, agnostic in (("agnostic", True), ("per-class", False)):
            cls = None if agnostic and i % 2 else classes
            got = run.nms(boxes, scores, cls, iou, agnostic, max_det)
            want = oc.greedy(bx, scores, cls, iou32, agnostic, max_det)
            ties, near, wrong, decisive = oc.check_decisions(
                bx, scores, cls, iou32, agnostic, max_det, got)
            checks += 1
            identical += got == want
            decisions_near += decisive
            near_all += [(label, mode, j, top) for j, top in near]
            ties_all += [(label, mode, j, top) for j, top in ties]
            if wrong:
                fail("%s, %s: %d decisions differ from the reference by more "
                     "than %g (relative) of the threshold, first: %s; kept %d,"
                     " reference %d" % (label, mode, len(wrong), oc.REL_TOL,
                                        wrong[0], len(got), len(want)))
            elif not near and not ties and got != want:
                fail("%s, %s: kept lists differ with every decision right"
                     % (label, mode))
    print("golden-obb: %d/%d random checks identical to the reference "
          "(%d cases, class-aware and agnostic)" % (identical, checks,
                                                    a.cases))
    print("golden-obb: %d decisions had a decisive pair within %g of the "
          "threshold; %d differ from the float64 reference with an IoU that "
          "is the threshold in float32 (kept: not above it)%s; %d others "
          "differ within %g%s" % (
              decisions_near, oc.REL_TOL, len(ties_all),
              (", first: %s" % (ties_all[0],)) if ties_all else "",
              len(near_all), oc.REL_TOL,
              (", first: %s" % (near_all[0],)) if near_all else ""))
    if len(near_all) > MAX_NEAR:
        fail("%d near-threshold differences, more than %d" % (
            len(near_all), MAX_NEAR))
    if failures:
        print("golden-obb: %d failures" % len(failures))
        return 1
    print("golden-obb: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

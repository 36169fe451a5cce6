#!/usr/bin/env python3
"""cnms_merge and cnms_slice_grid (libcudanms, through ctypes) against the
independent reference of SAHI's rules, tests/scripts/sahi_ref.py:

- every merge the reference's hand-derived self-checks make (its own
  crafted cases: pairs at the threshold, equal scores, chains, nested and
  zero-area boxes, float32 ties, thresholds 0 and 1), replayed through
  cnms_merge;
- seeded random sets of boxes on coarse grids (so that pairs land exactly
  on thresholds, scores tie, boxes repeat and have zero area), for every
  rule (greedy NMM, NMM, NMS), metric (IoS, IoU) and class mode, at
  thresholds 0, 0.1, 1/3, 0.5, 0.7 and 1;
- seeded random slice grids.

Each merge must give the reference's records exactly: their count and
order, each box (float32 of the reference's float64 box), score and class,
and the index of the record that kept it.

    test_sahi_merge.py LIBCUDANMS [CASES]
"""

import ctypes
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sahi_ref  # noqa: E402

RULES = {"greedy-nmm": 0, "nmm": 1, "nms": 2}
METRICS = {"ios": 0, "iou": 1}


class MergeParams(ctypes.Structure):
    _fields_ = [("rule", ctypes.c_int), ("metric", ctypes.c_int),
                ("threshold", ctypes.c_double),
                ("class_agnostic", ctypes.c_int), ("rules", ctypes.c_int)]


class Det(ctypes.Structure):
    _fields_ = [("score", ctypes.c_float), ("x1", ctypes.c_float),
                ("y1", ctypes.c_float), ("x2", ctypes.c_float),
                ("y2", ctypes.c_float), ("class_id", ctypes.c_int32),
                ("anchor", ctypes.c_int32), ("angle", ctypes.c_float)]


class Slice(ctypes.Structure):
    _fields_ = [("x1", ctypes.c_int), ("y1", ctypes.c_int),
                ("x2", ctypes.c_int), ("y2", ctypes.c_int)]


class Lib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.cnms_merge.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_double),
            ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int32),
            ctypes.c_int, ctypes.POINTER(MergeParams),
            ctypes.POINTER(ctypes.POINTER(Det)), ctypes.POINTER(ctypes.c_int)]
        self.lib.cnms_slice_grid.argtypes = [
            ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.c_double, ctypes.c_double, ctypes.POINTER(Slice),
            ctypes.c_int]
        self.lib.cnms_ctx_error.restype = ctypes.c_char_p
        self.ctx = ctypes.c_void_p()
        if self.lib.cnms_ctx_new(0, 0, ctypes.byref(self.ctx)) != 0:
            raise SystemExit("FAIL cannot make a CPU context")

    def merge(self, boxes, scores, classes, rule, metric, thr, agnostic,
              consistent=False):
        b = np.ascontiguousarray(np.asarray(boxes, dtype=np.float64)
                                 .reshape(-1, 4))
        s = np.ascontiguousarray(np.asarray(scores, dtype=np.float64)
                                 .reshape(-1))
        c = np.ascontiguousarray(np.asarray(classes).reshape(-1)
                                 .astype(np.int32))
        m = MergeParams(RULES[rule], METRICS[metric], thr, int(agnostic),
                        int(consistent))
        out = ctypes.POINTER(Det)()
        n = ctypes.c_int()
        st = self.lib.cnms_merge(
            self.ctx, b.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
            s.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
            c.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)), len(s),
            ctypes.byref(m), ctypes.byref(out), ctypes.byref(n))
        if st != 0:
            raise AssertionError("cnms_merge failed: %s"
                                 % self.lib.cnms_ctx_error(self.ctx))
        return [(out[k].x1, out[k].y1, out[k].x2, out[k].y2, out[k].score,
                 out[k].class_id, out[k].anchor) for k in range(n.value)]

    def grid(self, w, h, sw, sh, ow, oh):
        n = self.lib.cnms_slice_grid(w, h, sw, sh, ow, oh, None, 0)
        if n < 0:
            return None
        arr = (Slice * max(n, 1))()
        self.lib.cnms_slice_grid(w, h, sw, sh, ow, oh, arr, n)
        return [[arr[k].x1, arr[k].y1, arr[k].x2, arr[k].y2]
                for k in range(n)]


def expected(boxes, scores, classes, rule, metric, thr, agnostic):
    """The reference's records: float32 box, score, class, keeper."""
    b, s, c, groups = sahi_ref.merge(boxes, scores, classes, rule, metric,
                                     thr, agnostic, return_groups=True)
    f = np.float32
    return [(f(b[k][0]), f(b[k][1]), f(b[k][2]), f(b[k][3]), f(s[k]),
             int(c[k]), groups[k][0]) for k in range(len(s))]


def metric64(a, b, metric):
    """The consistent rules' metric: float64, 0 where the denominator is
    not > 0."""
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    den = area_a + area_b - w * h if metric == "iou" else min(area_a, area_b)
    return w * h / den if den > 0 else 0.0


def consistent(boxes, scores, classes, rule, metric, thr, agnostic):
    """The consistent rules (docs/contracts.md, "Tiles"), written from their
    statement: records (float32 of the float64 results, keeper index) in
    output order."""
    b = [list(map(float, x)) for x in np.asarray(boxes, np.float64)
         .reshape(-1, 4)]
    s = [float(x) for x in np.asarray(scores, np.float64).reshape(-1)]
    c = [int(x) for x in np.asarray(classes).reshape(-1)]
    n = len(s)
    out = []
    for cls in (sorted(set(c)) if not agnostic else [None]):
        idx = [i for i in range(n) if agnostic or c[i] == cls]
        order = sorted(idx, key=lambda i: (-s[i], b[i][0], b[i][1], b[i][2],
                                           b[i][3], i))
        pos = {i: p for p, i in enumerate(order)}
        owner = {}
        lists = {}
        keepers = []
        for i in order:
            if rule == "nmm":
                if i not in owner:
                    owner[i] = i
                    keepers.append(i)
                    lists[i] = []
                k = owner[i]
                for j in idx:
                    if (j not in owner and pos[j] > pos[i]
                            and metric64(b[i], b[j], metric) >= thr):
                        owner[j] = k
                        lists[k].append(j)
                continue
            if i in owner:
                continue
            owner[i] = i
            keepers.append(i)
            lists[i] = []
            for j in order[pos[i] + 1:]:
                if j not in owner and metric64(b[i], b[j], metric) >= thr:
                    owner[j] = i
                    lists[i].append(j)
        for k in keepers:
            box, score, cat = list(b[k]), s[k], c[k]
            alone = []
            if rule != "nms":
                for j in lists[k]:
                    if metric64(box, b[j], metric) >= thr:
                        cat = c[j] if s[j] > score else cat
                        score = max(score, s[j])
                        box = [min(box[0], b[j][0]), min(box[1], b[j][1]),
                               max(box[2], b[j][2]), max(box[3], b[j][3])]
                    else:
                        alone.append(j)
            out.append((box, score, cat, k))
            out.extend((b[j], s[j], c[j], j) for j in alone)
    if rule == "nms" and not agnostic:
        out.sort(key=lambda r: -r[1])
    f = np.float32
    return [(f(x[0][0]), f(x[0][1]), f(x[0][2]), f(x[0][3]), f(x[1]), x[2],
             x[3]) for x in out]


def same(got, want):
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        if any(np.float32(g[i]) != w[i] for i in range(5)) or g[5:] != w[5:]:
            return False
    return True


def random_case(rng):
    n = int(rng.integers(0, 31))
    step = float(rng.choice([1.0, 0.5, 0.25]))
    x1 = rng.integers(0, 24, n) * step
    y1 = rng.integers(0, 24, n) * step
    w = rng.integers(0, 12, n) * step
    h = rng.integers(0, 12, n) * step
    boxes = np.stack([x1, y1, x1 + w, y1 + h], axis=1)
    # a few repeated boxes
    for i in range(n):
        if i > 0 and rng.random() < 0.15:
            boxes[i] = boxes[int(rng.integers(0, i))]
    pool = np.array([0.3, 0.5, 0.5, 0.7, 0.9, 0.9000000001, 0.95, 0.2])
    scores = rng.choice(pool, n) if rng.random() < 0.7 else rng.random(n)
    classes = rng.integers(0, 3, n)
    return boxes, scores, classes


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lib = Lib(sys.argv[1])
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    failed = 0
    checked = 0

    # the reference's own crafted merges, replayed
    crafted = []
    real_merge = sahi_ref.merge

    def recording(boxes, scores, classes, postprocess="greedy-nmm",
                  metric="ios", threshold=0.5, class_agnostic=False,
                  backend="numpy", return_groups=False):
        if backend == "numpy" and not return_groups:
            crafted.append((boxes, scores, classes, postprocess, metric,
                            threshold, class_agnostic))
        return real_merge(boxes, scores, classes, postprocess, metric,
                          threshold, class_agnostic, backend=backend,
                          return_groups=return_groups)

    sahi_ref.merge = recording
    sahi_ref._self_checks()
    sahi_ref.merge = real_merge
    if sahi_ref._failed:
        sys.exit("FAIL the reference's own checks failed")
    for args in crafted:
        boxes, scores, classes, rule, metric, thr, agnostic = args
        rule = rule.lower().replace("_", "-")
        rule = "greedy-nmm" if rule == "greedynmm" else rule
        want = expected(boxes, scores, classes, rule, metric, thr, agnostic)
        got = lib.merge(boxes, scores, classes, rule, metric.lower(), thr,
                        agnostic)
        checked += 1
        if not same(got, want):
            failed += 1
            print("FAIL crafted %s %s %s agnostic=%s:\n  got  %s\n  want %s"
                  % (rule, metric, thr, agnostic, got, want))
    n_crafted = checked

    rng = np.random.default_rng(20261207)
    for _ in range(cases):
        boxes, scores, classes = random_case(rng)
        for rule in RULES:
            for metric in METRICS:
                for agnostic in (False, True):
                    for thr in (0.0, 0.1, 1.0 / 3.0, 0.5, 0.7, 1.0):
                        want = expected(boxes, scores, classes, rule, metric,
                                        thr, agnostic)
                        got = lib.merge(boxes, scores, classes, rule, metric,
                                        thr, agnostic)
                        checked += 1
                        if not same(got, want):
                            failed += 1
                            if failed < 5:
                                print("FAIL random %s %s %s agnostic=%s\n"
                                      "  boxes %s\n  scores %s\n  classes %s"
                                      "\n  got  %s\n  want %s"
                                      % (rule, metric, thr, agnostic,
                                         boxes.tolist(), scores.tolist(),
                                         classes.tolist(), got, want))

    sahi_failed = failed
    # the consistent rules against their statement
    n_consistent = 0
    for _ in range(cases // 2):
        boxes, scores, classes = random_case(rng)
        for rule in RULES:
            for metric in METRICS:
                for agnostic in (False, True):
                    for thr in (0.0, 1.0 / 3.0, 0.5, 1.0):
                        want = consistent(boxes, scores, classes, rule,
                                          metric, thr, agnostic)
                        got = lib.merge(boxes, scores, classes, rule, metric,
                                        thr, agnostic, consistent=True)
                        n_consistent += 1
                        if not same(got, want):
                            failed += 1
                            if failed < 5:
                                print("FAIL consistent %s %s %s agnostic=%s"
                                      "\n  boxes %s\n  scores %s\n  "
                                      "classes %s\n  got  %s\n  want %s"
                                      % (rule, metric, thr, agnostic,
                                         boxes.tolist(), scores.tolist(),
                                         classes.tolist(), got, want))

    cons_failed = failed - sahi_failed
    grids = 0
    for _ in range(2000):
        w = int(rng.integers(1, 5000))
        h = int(rng.integers(1, 3000))
        sw = int(rng.integers(1, 2000))
        sh = int(rng.integers(1, 2000))
        ow = float(rng.choice([0.0, 0.1, 0.2, 0.25, 0.29, 0.5, 0.9]))
        oh = float(rng.choice([0.0, 0.1, 0.2, 0.25, 0.29, 0.5, 0.9]))
        if (w // max(1, sw - int(ow * sw)) > 4000
                or h // max(1, sh - int(oh * sh)) > 4000):
            continue
        want = sahi_ref.slice_bboxes(h, w, sh, sw, oh, ow)
        got = lib.grid(w, h, sw, sh, ow, oh)
        grids += 1
        if got != want:
            failed += 1
            print("FAIL grid %dx%d slices %dx%d overlap %g %g:\n  got  %s\n"
                  "  want %s" % (w, h, sw, sh, ow, oh, got, want))
    # refused arguments
    for bad in ((0, 10, 5, 5, 0.2, 0.2), (10, 10, 5, 5, 1.0, 0.2),
                (10, 10, 5, 5, -0.1, 0.2), (10, 10, 0, 5, 0.2, 0.2)):
        if lib.grid(*bad) is not None:
            failed += 1
            print("FAIL grid %s not refused" % (bad,))

    print("sahi merge: %d merges identical to the reference (%d crafted, "
          "%d random sets x 3 rules x 2 metrics x 2 class modes x 6 "
          "thresholds); %d merges under the consistent rules identical to "
          "their statement; %d slice grids identical; %d failed"
          % (checked - sahi_failed, n_crafted, cases,
             n_consistent - cons_failed, grids, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Shared by the oriented-box golden tests (test_golden_obb.py,
test_golden_obb_ultralytics.py): the independent polygon-IoU reference
(shapely, float64), the greedy loop of the written rule, the local check
of every decision cudanms made, and golden-obb-run (obb_run.c) driven on
.npy files.

An oriented box is (cx, cy, w, h, a), a in radians; its corners are
c + u + v, c - u + v, c - u - v, c + u - v with u = w/2 (cos a, sin a),
v = h/2 (-sin a, cos a) (ultralytics' xywhr). IoU = area(A & B) /
(w_a h_a + w_b h_b - area(A & B)), 0 where a box has no positive w and h
or the denominator is not positive."""

import math
import os
import subprocess

import numpy as np

try:
    from shapely.geometry import Polygon
except ImportError:  # pragma: no cover - depends on the machine
    Polygon = None

# A decision of cudanms may differ from the float64 reference only where
# the decisive pair's reference IoU lies within this much (relative) of
# the threshold: cudanms computes the same IoU in float32.
REL_TOL = 1e-5


def corners(b):
    """The 4 corners (float64) of box b (cx cy w h a)."""
    cx, cy, w, h, a = (float(v) for v in b[:5])
    c, s = math.cos(a), math.sin(a)
    ux, uy = 0.5 * w * c, 0.5 * w * s
    vx, vy = -0.5 * h * s, 0.5 * h * c
    return [(cx + ux + vx, cy + uy + vy), (cx - ux + vx, cy - uy + vy),
            (cx - ux - vx, cy - uy - vy), (cx + ux - vx, cy + uy - vy)]


def valid(b):
    return bool(np.all(np.isfinite(b[:5]))) and b[2] > 0 and b[3] > 0


class Boxes:
    """Polygons, areas and reach of n boxes [n, 5] (float32), made once."""

    def __init__(self, boxes):
        self.b = np.asarray(boxes, np.float32)
        self.ok = [valid(b) for b in self.b]
        self.area = [float(b[2]) * float(b[3]) if k else 0.0
                     for b, k in zip(self.b, self.ok)]
        self.reach = np.array([0.5 * math.hypot(float(b[2]), float(b[3]))
                               if k else 0.0
                               for b, k in zip(self.b, self.ok)])
        self.cxy = np.where(np.array(self.ok)[:, None],
                            self.b[:, :2].astype(np.float64), 0.0) \
            if len(self.b) else np.zeros((0, 2))
        self._poly = {}
        self._iou = {}

    def poly(self, i):
        p = self._poly.get(i)
        if p is None:
            p = self._poly[i] = Polygon(corners(self.b[i]))
        return p

    def iou(self, i, j):
        key = (i, j) if i < j else (j, i)
        v = self._iou.get(key)
        if v is None:
            v = self._iou[key] = self._iou_of(i, j)
        return v

    def _iou_of(self, i, j):
        if not (self.ok[i] and self.ok[j]):
            return 0.0
        d = self.cxy[i] - self.cxy[j]
        if math.hypot(d[0], d[1]) > self.reach[i] + self.reach[j]:
            return 0.0
        inter = self.poly(i).intersection(self.poly(j)).area
        den = self.area[i] + self.area[j] - inter
        return inter / den if den > 0 and inter > 0 else 0.0

    def near(self, i, js):
        """Those of js whose box can meet box i (reach test)."""
        js = np.asarray(js, np.int64)
        if len(js) == 0 or not self.ok[i]:
            return js[:0]
        d = np.hypot(*(self.cxy[js] - self.cxy[i]).T)
        return js[d <= self.reach[js] + self.reach[i]]


def order(scores, boxes):
    """Indices taking part (finite score and box), by (score desc, index
    asc); -0 equals +0."""
    idx = [i for i in range(len(scores))
           if np.isfinite(scores[i]) and np.all(np.isfinite(boxes[i][:5]))]
    idx.sort(key=lambda i: (-float(scores[i]), i))
    return idx


def greedy(bx, scores, classes, iou, agnostic, max_det=0, iou_fn=None):
    """The written rule with the reference IoU: the kept list."""
    iou_fn = iou_fn or bx.iou
    kept, by_cls = [], {}
    for j in order(scores, bx.b):
        if max_det > 0 and len(kept) >= max_det:
            break
        k = -1 if agnostic or classes is None else int(classes[j])
        prev = by_cls.setdefault(k, [])
        if not any(iou_fn(i, j) > iou for i in bx.near(j, prev)):
            kept.append(j)
            prev.append(j)
    return kept


def check_decisions(bx, scores, classes, iou, agnostic, max_det, got):
    """Checks every decision of cudanms's kept list got against the rule,
    one candidate at a time, given the boxes cudanms kept before it (so a
    decision near the threshold does not hide the ones after it). iou is
    the float32 threshold.

    Returns (ties, near, wrong, decisive), lists of (candidate, IoU of its
    decisive pair) whose decision differs from the reference: ties where
    that IoU rounds to the threshold in float32 and cudanms kept the box
    (a float32 IoU equal to the threshold is not above it: an IoU that is
    exactly the decimal threshold, 0.9 between integer boxes, against
    float32(0.9) < 0.9); near where it lies within REL_TOL (relative) of
    the threshold; wrong where it lies farther (and a kept list that is
    not a subsequence of the order, or over max_det). decisive counts the
    decisions, agreeing or not, whose decisive pair lies within REL_TOL."""
    tol = REL_TOL * iou
    pos = {j: k for k, j in enumerate(order(scores, bx.b))}
    ties, near, wrong, decisive = [], [], [], 0
    if any(j not in pos for j in got) or \
            [pos[j] for j in got] != sorted(pos[j] for j in got) or \
            len(set(got)) != len(got) or (max_det > 0 and len(got) > max_det):
        return ties, near, [("order", got)], 0
    kept_set, by_cls, n_kept = set(got), {}, 0
    for j in order(scores, bx.b):
        if max_det > 0 and n_kept >= max_det:
            break
        k = -1 if agnostic or classes is None else int(classes[j])
        prev = by_cls.setdefault(k, [])
        ious = [bx.iou(i, j) for i in bx.near(j, prev)]
        top = max(ious, default=0.0)
        kept = j in kept_set
        is_near = abs(top - iou) <= tol
        decisive += is_near
        if kept != (top <= iou):
            if kept and np.float32(top) == np.float32(iou):
                ties.append((j, top))
            elif is_near:
                near.append((j, top))
            else:
                wrong.append((j, top))
        if kept:
            prev.append(j)
            n_kept += 1
    return ties, near, wrong, decisive


class Runner:
    """golden-obb-run on .npy files in workdir."""

    def __init__(self, tool, workdir, backend="cpu"):
        self.tool, self.dir, self.backend = tool, workdir, backend
        os.makedirs(workdir, exist_ok=True)

    def _path(self, name):
        return os.path.join(self.dir, name)

    def _run(self, args):
        r = subprocess.run([self.tool] + [str(a) for a in args],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("golden-obb-run failed (%d): %s" % (
                r.returncode, r.stderr.strip()))
        return r.stdout

    def nms(self, boxes, scores, classes, iou, agnostic, max_det=0):
        np.save(self._path("boxes.npy"), np.asarray(boxes, np.float32))
        np.save(self._path("scores.npy"), np.asarray(scores, np.float32))
        cls = "-"
        if classes is not None:
            cls = self._path("classes.npy")
            np.save(cls, np.asarray(classes, np.int32))
        self._run(["nms", self._path("boxes.npy"), self._path("scores.npy"),
                   cls, repr(float(np.float32(iou))), int(agnostic),
                   int(max_det), self.backend, self._path("keep.npy")])
        keep = np.load(self._path("keep.npy"))
        assert keep.dtype == np.int64, keep.dtype
        return [int(k) for k in keep]

    def detect(self, tensor, score, iou, agnostic, max_det, max_cand,
               model, frame, letterbox):
        np.save(self._path("tensor.npy"), tensor)
        out = self._run(["detect", self._path("tensor.npy"),
                         repr(float(np.float32(score))),
                         repr(float(np.float32(iou))), int(agnostic),
                         max_det, max_cand, model[0], model[1], frame[0],
                         frame[1], int(letterbox), self.backend,
                         self._path("dets.npy")])
        cands = int(out.split("candidates", 1)[1].split()[0])
        return np.load(self._path("dets.npy")), cands

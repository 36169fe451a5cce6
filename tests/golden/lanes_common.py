"""Shared by the lane golden test (test_golden_lanes.py): an independent
reference of LaneATT's lane NMS, written for the test from the rule (not
from the library), in three forms that must agree:

  suppresses()  one pair, scalar NumPy float32 / float64 steps, literal;
  sup_matrix()  every pair at once, NumPy arrays, the same steps;
  torch_nms()   the same rule in torch tensors (CPU or CUDA), vectorised,
                for benchmarks; the greedy resolve on the host.

and a plain greedy loop, the LaneATT-like proposal generator and
cudanms-tool nms (lane mode) driven on .npy files.

A proposal is float32 [5 + S]: l0, l1 (class logits, ignored), start_y,
start_x (ignored), length, then S x offsets (model pixels), n = S - 1.

The rule (LaneATT's devIoU, with its float and double steps):
  start = (int) ((double) (float) (start_y * (float) n) + 0.5)
  end   = (int) ((double) ((float) ((float) start + length) - 1.0f) + 0.5
                 - ((length - 1.0f) < 0.0f ? 1 : 0))
  (int) truncates toward zero;
  s = max(start_a, start_b), e = min(end_a, end_b, n); e < s: no overlap;
  dist = float32 sum over i = s..e, in order, of |x_a[i] - x_b[i]| written
         as (x_a < x_b ? x_b - x_a : x_a - x_b);
  b is suppressed by kept a iff dist < (float) (distance * (float) (e-s+1)).
Greedy: score descending, ties to the lower index; a lane is dropped if a
KEPT lane suppresses it; stop after max_det kept (<= 0: no cap). A lane
whose score, start_y or length is not finite, whose start lies outside
[0, n] or whose |length| > 2^20 takes no part.
"""

import math
import os
import subprocess

import numpy as np

F = np.float32
D = np.float64
MAX_LENGTH = 2.0 ** 20
# The model and frame size of Tool.decode: one size, the identity map.
DECODE_WIDTH, DECODE_HEIGHT = 640, 360


# ---------------------------------------------------------------- scalar

def start_row(start_y, n):
    """start of a lane, or None where it takes no part (start outside
    [0, n], start_y not finite)."""
    sy = F(start_y)
    if not np.isfinite(sy):
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        v = D(F(sy * F(n))) + D(0.5)
    # (int) v lies in [0, n] iff -1 < v < n + 1; keeps int() off inf
    if not (v > -1.0 and v < n + 1.0):
        return None
    return int(v)  # Python's int() truncates toward zero, as C does


def end_row(start, length):
    L = F(length)
    v = F(F(F(start) + L) - F(1.0))
    neg = D(1.0) if F(L - F(1.0)) < F(0.0) else D(0.0)
    return int((D(v) + D(0.5)) - neg)


def takes_part(p, score, n):
    if not (np.isfinite(F(score)) and np.isfinite(F(p[2]))
            and np.isfinite(F(p[4]))):
        return False
    if abs(float(F(p[4]))) > MAX_LENGTH:
        return False
    return start_row(p[2], n) is not None


def overlap(a, b, n):
    """(s, e) of two lanes that take part; e < s: no overlap."""
    sa, sb = start_row(a[2], n), start_row(b[2], n)
    ea, eb = end_row(sa, a[4]), end_row(sb, b[4])
    return max(sa, sb), min(ea, eb, n)


def lane_dist(a, b, s, e):
    dist = F(0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(s, e + 1):
            xa, xb = F(a[5 + i]), F(b[5 + i])
            d = F(xb - xa) if xa < xb else F(xa - xb)
            dist = F(dist + d)
    return dist


def suppresses(a, b, distance, n, strict=True):
    """Does kept lane a suppress lane b? Both take part. strict=False is
    the <= mutation, for the test's own sensitivity count only."""
    s, e = overlap(a, b, n)
    if e < s:
        return False
    dist = lane_dist(a, b, s, e)
    thr = F(F(distance) * F(e - s + 1))
    return bool(dist < thr) if strict else bool(dist <= thr)


def order(props, scores):
    """Indices taking part, by (score desc, index asc); -0 equals +0."""
    n = props.shape[1] - 6
    idx = [i for i in range(len(scores)) if takes_part(props[i], scores[i], n)]
    idx.sort(key=lambda i: (-float(scores[i]), i))
    return idx


def greedy(props, scores, distance, max_det=0, sup=None):
    """The kept list. sup(i, j): does kept i suppress j (default: the
    scalar suppresses())."""
    props = np.asarray(props, F)
    n = props.shape[1] - 6
    if sup is None:
        def sup(i, j):
            return suppresses(props[i], props[j], distance, n)
    kept = []
    for j in order(props, scores):
        if max_det > 0 and len(kept) >= max_det:
            break
        if not any(sup(i, j) for i in kept):
            kept.append(j)
    return kept


# ---------------------------------------------------------------- arrays

def rows_of(props, scores):
    """(part, start, end) arrays; start and end are 0 where part is False."""
    props = np.asarray(props, F)
    N, n = props.shape[0], props.shape[1] - 6
    sy, L, sc = props[:, 2], props[:, 4], np.asarray(scores, F)
    with np.errstate(over="ignore", invalid="ignore"):
        v = (sy * F(n)).astype(F).astype(D) + D(0.5)
        part = np.isfinite(sc) & np.isfinite(sy) & np.isfinite(L) & \
            (np.abs(L.astype(D)) <= MAX_LENGTH) & (v > -1.0) & (v < n + 1.0)
        st = np.where(part, np.trunc(np.where(part, v, 0.0)), 0).astype(
            np.int64)
        Lp = np.where(part, L, F(0))
        ev = ((st.astype(F) + Lp).astype(F) - F(1)).astype(F).astype(D)
        neg = np.where((Lp - F(1)).astype(F) < F(0), D(1), D(0))
        en = np.trunc((ev + D(0.5)) - neg).astype(np.int64)
    assert st.dtype == np.int64 and N == len(sc)
    return part, st, np.where(part, en, 0)


def sup_matrix(props, scores, distance, strict=True):
    """M[a, b]: kept a suppresses b (False where either takes no part)."""
    props = np.asarray(props, F)
    N, S = props.shape[0], props.shape[1] - 5
    n = S - 1
    part, st, en = rows_of(props, scores)
    s = np.maximum(st[:, None], st[None, :])
    e = np.minimum(np.minimum(en[:, None], en[None, :]), n)
    x = props[:, 5:]
    dist = np.zeros((N, N), F)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(S):
            inr = (s <= i) & (i <= e)
            if not inr.any():
                continue
            xa, xb = x[:, i][:, None], x[:, i][None, :]
            d = np.where(xa < xb, xb - xa, xa - xb)
            assert d.dtype == F
            dist = np.where(inr, dist + d, dist)
            assert dist.dtype == F
        thr = F(distance) * (e - s + 1).astype(F)
        assert thr.dtype == F
        cmp = dist < thr if strict else dist <= thr
    return (e >= s) & cmp & part[:, None] & part[None, :], (dist, thr, s, e)


def greedy_matrix(props, scores, distance, max_det=0, strict=True):
    M, _ = sup_matrix(props, scores, distance, strict)
    return greedy(props, scores, distance, max_det,
                  sup=lambda i, j: bool(M[i, j]))


# ---------------------------------------------------------------- decode

def lane_scores(props):
    """softmax (l0, l1)[1] = 1 / (1 + e^(l0 - l1)), in double (NumPy's
    exp), rounded once to float32; NaN where a logit is not finite."""
    props = np.asarray(props, F)
    l0, l1 = props[:, 0].astype(D), props[:, 1].astype(D)
    with np.errstate(over="ignore", invalid="ignore"):
        sc = (D(1.0) / (D(1.0) + np.exp(l0 - l1))).astype(F)
    return np.where(np.isfinite(l0) & np.isfinite(l1), sc, F(np.nan))


def points_in_frame(p, width):
    """How many points of a lane (its proposal p, one that takes part) lie
    in a frame of the model's size (the map is then the identity: a
    point's frame x is its x, its y the row's, in the frame): LaneATT's
    proposals_to_pred, the rows start .. min(end, n) and, below start,
    the rows down to which every x lies in [0, width]; a row whose x is
    below 0 (or NaN) has no point; a point is in the frame when its x is
    at most width."""
    n = len(p) - 6
    start = start_row(p[2], n)
    end = min(end_row(start, p[4]), n)
    k, ext = 0, True
    for i in range(n, -1, -1):
        x = F(p[5 + i])
        if i < start:
            ext = ext and bool(x >= F(0)) and bool(x <= F(width))
        if i <= end and (i >= start or ext) and x >= F(0) and \
                x <= F(width):
            k += 1
    return k


def decode(props, score_threshold, distance, max_det, width=None):
    """cnms_detect (layout laneatt) by the rule: a candidate when its score
    is above score_threshold (float32, strictly) and it takes part; then
    the lane NMS (at most max_det kept, <= 0: no cap). With width (the
    model's width, the frame of the model's size), a kept lane with fewer
    than 2 points in the frame (points_in_frame) is left out, the lanes
    after it moving up; width None keeps every lane NMS keeps. Returns
    [(anchor, score)] in kept order."""
    props = np.asarray(props, F)
    sc = lane_scores(props)
    cand = np.where(sc > F(score_threshold), sc, F(np.nan))
    kept = greedy_matrix(props, cand, distance, max_det)
    if width is not None:
        kept = [j for j in kept if points_in_frame(props[j], width) >= 2]
    return [(j, float(sc[j])) for j in kept]


# ----------------------------------------------------------------- torch

def torch_nms(props, scores, distance, max_det=0, device="cpu"):
    """LaneATT's lane NMS vectorised in torch: the pair matrix on device
    (float32 and float64 steps as in the rule), then the greedy resolve
    over it on the host (as LaneATT resolves its mask). props [N, 5+S]
    and scores [N] are torch tensors or arrays. Returns the kept list."""
    import torch
    p = torch.as_tensor(np.asarray(props, F)).to(device)
    sc = torch.as_tensor(np.asarray(scores, F)).to(device)
    N, S = p.shape[0], p.shape[1] - 5
    n = S - 1
    f32, f64 = torch.float32, torch.float64
    sy, L = p[:, 2], p[:, 4]
    v = (sy * torch.tensor(float(n), dtype=f32, device=device)).to(f64) + 0.5
    part = torch.isfinite(sc) & torch.isfinite(sy) & torch.isfinite(L) & \
        (L.to(f64).abs() <= MAX_LENGTH) & (v > -1.0) & (v < n + 1.0)
    st = torch.where(part, v, torch.zeros_like(v)).trunc().to(torch.int64)
    Lp = torch.where(part, L, torch.zeros_like(L))
    one = torch.tensor(1.0, dtype=f32, device=device)
    ev = ((st.to(f32) + Lp) - one).to(f64)
    neg = ((Lp - one) < 0).to(f64)
    en = ((ev + 0.5) - neg).trunc().to(torch.int64)
    s = torch.maximum(st[:, None], st[None, :])
    e = torch.clamp(torch.minimum(en[:, None], en[None, :]), max=n)
    x = p[:, 5:]
    dist = torch.zeros((N, N), dtype=f32, device=device)
    for i in range(S):
        inr = (s <= i) & (i <= e)
        xa, xb = x[:, i][:, None], x[:, i][None, :]
        d = torch.where(xa < xb, xb - xa, xa - xb)
        dist = torch.where(inr, dist + d, dist)
    thr = torch.tensor(float(F(distance)), dtype=f32,
                       device=device) * (e - s + 1).to(f32)
    M = (e >= s) & (dist < thr) & part[:, None] & part[None, :]
    # order: score desc, index asc (a stable sort of -score); -0 == +0
    key = torch.where(part, -sc, torch.full_like(sc, math.inf))
    idx = torch.sort(key, stable=True).indices
    n_part = int(part.sum())
    idx = idx[:n_part].cpu().numpy()
    Mh = M.cpu().numpy()
    removed = np.zeros(N, bool)
    kept = []
    for j in idx:
        if max_det > 0 and len(kept) >= max_det:
            break
        if removed[j]:
            continue
        kept.append(int(j))
        removed |= Mh[j]
    return kept


# ------------------------------------------------------------- proposals

def proposal(S, start_y, length, xs, l0=0.0, l1=1.0, start_x=0.0):
    xs = np.broadcast_to(np.asarray(xs, F), (S,))
    return np.concatenate([np.array([l0, l1, start_y, start_x, length], F),
                           xs]).astype(F)


def laneatt_like(rng, S, N, integer=False, img_w=640.0):
    """N LaneATT-like proposals [N, 5+S] and scores: a few lanes curving
    to a vanishing point, each with near-duplicate proposals (jittered
    offsets, start and length), plus noise proposals anywhere (some
    beyond the frame). integer=True: integer offsets and lengths, so that
    distances equal to the threshold occur often."""
    n = S - 1
    t = np.arange(S, dtype=D) / max(n, 1)
    k = int(rng.integers(2, 6))
    vpx = rng.uniform(0.35, 0.65) * img_w
    n_dup = int(N * rng.uniform(0.5, 0.9))
    props = np.zeros((N, 5 + S), F)
    scores = np.zeros(N, F)
    lane = rng.integers(0, k, N)
    x0 = rng.uniform(-0.4, 1.4, k) * img_w
    curve = rng.normal(0, 0.15 * img_w, k)
    r0 = rng.integers(0, max(1, n // 3) + 1, k)
    ln = np.maximum(1.0, rng.uniform(0.4, 1.0, k) * (S - r0))
    sig = rng.choice([0.5, 2.0, 6.0, 15.0], k)
    for j in range(N):
        if j < n_dup:
            q = lane[j]
            xs = x0[q] + (vpx - x0[q]) * t + curve[q] * t * (1 - t)
            xs = xs + rng.normal(0, sig[q]) + rng.normal(0, sig[q] / 3, S)
            r = r0[q] + int(rng.integers(-3, 4))
            length = ln[q] + rng.normal(0, 3)
            sc = rng.beta(5, 2)
        else:
            xb = rng.uniform(-0.5, 1.5) * img_w
            xs = xb + (rng.uniform(0, img_w) - xb) * t + \
                rng.normal(0, 0.2 * img_w) * t * (1 - t)
            r = int(rng.integers(-2, S + 2))
            length = rng.uniform(-2, S + 3)
            sc = rng.beta(1.5, 5)
        if integer:
            xs = np.round(xs)
            length = np.round(length * 2) / 2
        start_y = r / max(n, 1)
        if rng.random() < 0.2:  # not on a row
            start_y += rng.normal(0, 0.4) / max(n, 1)
        props[j] = proposal(S, start_y, length, xs,
                            l0=rng.normal(), l1=rng.normal(),
                            start_x=xs[min(max(r, 0), n)])
        scores[j] = sc
    perm = rng.permutation(N)
    return props[perm], scores[perm]


# ------------------------------------------------------------------- CLI

class Tool:
    """cudanms-tool nms in lane mode on .npy files in workdir."""

    def __init__(self, tool, workdir, backend="cpu"):
        self.tool, self.dir, self.backend = tool, workdir, backend
        os.makedirs(workdir, exist_ok=True)

    def _path(self, name):
        return os.path.join(self.dir, name)

    def nms(self, props, scores, distance, max_det=0):
        pp, sp, kp = (self._path(x) for x in
                      ("proposals.npy", "scores.npy", "keep.npy"))
        np.save(pp, np.asarray(props, F))
        np.save(sp, np.asarray(scores, F))
        if os.path.exists(kp):
            os.remove(kp)
        args = [self.tool, "nms", "--boxes", pp, "--scores", sp,
                "--lane-distance", repr(float(F(distance))), "--out", kp]
        if self.backend != "cpu":
            args += ["--backend", self.backend]
        if max_det > 0:
            args += ["--max-detections", str(max_det)]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("cudanms-tool failed (%d): %s" % (
                r.returncode, r.stderr.strip()))
        keep = np.load(kp)
        assert keep.dtype == np.int64, keep.dtype
        return [int(k) for k in keep]

    def decode(self, tensor, score_threshold, distance, max_det):
        """cudanms-tool decode --layout laneatt: [(anchor, confidence)] in
        printed order (max_candidates: the whole tensor; model and frame
        DECODE_WIDTH x DECODE_HEIGHT)."""
        import json
        tp = self._path("tensor.npy")
        np.save(tp, tensor)
        n = int(np.prod(tensor.shape[:-1]))
        args = [self.tool, "decode", "--tensor", tp, "--layout", "laneatt",
                "--lane-distance", repr(float(F(distance))),
                "--score-threshold", repr(float(F(score_threshold))),
                "--model-size", "%dx%d" % (DECODE_WIDTH, DECODE_HEIGHT),
                "--frame-size", "%dx%d" % (DECODE_WIDTH, DECODE_HEIGHT),
                "--max-detections", str(max(max_det, 1) if max_det > 0
                                        else max(n, 1)),
                "--max-candidates", str(max(n, 1))]
        if self.backend != "cpu":
            args += ["--backend", self.backend]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("cudanms-tool decode failed (%d): %s" % (
                r.returncode, r.stderr.strip()))
        out = []
        for line in r.stdout.splitlines():
            d = json.loads(line)
            out.append((int(d["anchor"]), float(F(d["confidence"]))))
        return out

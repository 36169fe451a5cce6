#!/usr/bin/python3
"""Golden test of lane NMS: cudanms-tool nms in lane mode (cnms_nms_lanes)
against a reference written for the test from the rule of LaneATT's
devIoU (lanes_common.py: explicit float32 / float64 steps, a plain
greedy loop; not the library).

usage: test_golden_lanes.py CUDANMS_TOOL WORKDIR [--cases N] [--seed S]
    [--backend cpu|cuda] [--reference-only]

Hand-made cases first, each with its kept list worked out by hand (in the
comments) and asserted exactly, of the reference (scalar and arrays), of
the torch version where torch imports, and of cudanms-tool: the rows of a
lane (length 0, 0.5, 0.75, 1, 1.49, 1.5, negative, the float32 sum of
start and length, start_y rounding in double and truncation toward zero,
the last row, beyond it, end < start, lengths past the last row), the
distance (equal to distance * rows: kept; one float below: suppressed;
the float32 product rounding down; the float32 sum in row order), the
greedy walk (equal scores to the lower index, a dropped lane suppresses
nothing, max_detections), what takes no part (non-finite score, start_y,
length; start outside [0, n]; |length| > 2^20), what is ignored (logits,
start_x) and non-finite offsets (a NaN or infinite distance is not below
the threshold). The test checks that these cases tell < from <=.

Then seeded LaneATT-like proposal sets (S = 72 mostly, N up to 1000: a
few lanes curving to a vanishing point with near-duplicate proposals,
noise, some integer sets where distances equal to the threshold are
common; S = 2, 3, 10 too; max_detections 0 or 4, LaneATT's top-k): the
kept list must equal the reference's exactly; the scalar and array
references must agree pair by pair; the torch version must give the same
kept list. No tolerance anywhere: the arithmetic is specified to the bit.

Last, cudanms-tool decode --layout laneatt (cnms_detect, layout
laneatt): hand logits whose scores are exact (0.5, 0, 1; a NaN logit: no
score) at thresholds around 0.5 (strictly above), then seeded tensors
([1, N, 5+S] and [N, 5+S], float32 and float16): the kept anchors and
confidences, in order, equal to the reference's decode (score 1 / (1 +
e^(l0 - l1)) in double with NumPy's exp, rounded to float32; then the
same lane NMS; then a kept lane with fewer than 2 points in the frame
left out, the lanes after it moving up). The candidate cap is left wide
(--max-candidates N); the seeded tensors must reach the points rule.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lanes_common as lc  # noqa: E402

import numpy as np  # noqa: E402

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:  # pragma: no cover - depends on the machine
    HAVE_TORCH = False

F = np.float32
NAN, INF = float("nan"), float("inf")
BIG = 2.0 ** 20

failures = []


def fail(msg):
    failures.append(msg)
    print("golden-lanes: FAIL " + msg)


def below(v):
    return float(np.nextafter(F(v), F(-np.inf)))


def above(v):
    return float(np.nextafter(F(v), F(np.inf)))


def case(name, S, lanes, distance, want, max_det=0):
    """lanes: (start_y, length, xs, score[, extra]) with extra a dict of
    l0, l1, start_x."""
    props = np.stack([lc.proposal(S, ln[0], ln[1], ln[2],
                                  **(ln[4] if len(ln) > 4 else {}))
                      for ln in lanes])
    scores = np.array([ln[3] for ln in lanes], F)
    return (name, props, scores, distance, max_det, want)


def hand_cases():
    Z5 = [0, 0, 0, 0, 0]
    c = []
    # S = 5, n = 4 unless said. Rows: start = (int) (start_y 4 + 0.5),
    # end = (int) (start + length - 1 + 0.5 - (length < 1)).
    c.append(case("identical lanes", 5,
                  [(0, 5, Z5, 0.9), (0, 5, Z5, 0.8)], 1.0, [0]))
    # rows 0..4, dist 1 * 5 = 5, threshold 1 * 5 = 5: 5 < 5 is false
    c.append(case("dist equal to distance * rows: kept", 5,
                  [(0, 5, Z5, 0.9), (0, 5, [1] * 5, 0.8)], 1.0, [0, 1]))
    # the last difference 1 - 2^-21: dist 4 + (1 - 2^-21) = 5 - 2^-21,
    # the float below 5: suppressed
    c.append(case("dist one float below distance * rows: suppressed", 5,
                  [(0, 5, Z5, 0.9), (0, 5, [1, 1, 1, 1, 1 - 2 ** -21], 0.8)],
                  1.0, [0]))
    # distance the float above 1: 5 (1 + 2^-23) rounds to 5 + 2^-21 > 5
    c.append(case("threshold one float above dist: suppressed", 5,
                  [(0, 5, Z5, 0.9), (0, 5, [1] * 5, 0.8)], above(1.0), [0]))
    # 4 + (1 - 2^-24) rounds to 5 in float32 (a double sum would be below)
    c.append(case("float32 sum rounds up to the threshold: kept", 5,
                  [(0, 5, Z5, 0.9), (0, 5, [1, 1, 1, 1, 1 - 2 ** -24], 0.8)],
                  1.0, [0, 1]))
    # S = 3, rows 0..2: 2^24 + 1 = 2^24 (even), + 1 = 2^24 in order;
    # threshold 5592406 * 3 = 2^24 + 2 (exact): suppressed (the sum in
    # another order, or in double, is 2^24 + 2: kept)
    c.append(case("float32 sum in row order: suppressed", 3,
                  [(0, 3, [0, 0, 0], 0.9), (0, 3, [2 ** 24, 1, 1], 0.8)],
                  5592406.0, [0]))
    # distance float(0.1), 5 rows: 0.1f * 5 = 0.50000000745 rounds to 0.5
    # in float32; dist 4 x 0.125 = 0.5: not below (a double product would
    # suppress)
    c.append(case("float32 product rounds down to dist: kept", 5,
                  [(0, 5, Z5, 0.9), (0, 5, [0.125] * 4 + [0], 0.8)],
                  0.1, [0, 1]))
    # length 0: start 0, end (int) (0 + 0 - 1 + 0.5 - 1) = (int) -1.5 = -1
    # < 0: no rows in common, kept; at start 2: (int) 0.5 = 0 < 2
    c.append(case("length 0: no rows", 5,
                  [(0, 5, Z5, 0.9), (0, 0, Z5, 0.8), (0.5, 0, Z5, 0.7)],
                  1.0, [0, 1, 2]))
    # length 1 at start 2: end (int) (2 + 1 - 1 + 0.5) = 2: row 2 alone,
    # where the x are equal
    XR2 = [100, 100, 0, 100, 100]
    c.append(case("length 1: one row", 5,
                  [(0, 5, Z5, 0.9), (0.5, 1, XR2, 0.8)], 1.0, [0]))
    # length 0.5 at start 2: (int) (2.5 - 1 + 0.5 - 1) = 1 < 2: none
    c.append(case("length 0.5: no rows", 5,
                  [(0, 5, Z5, 0.9), (0.5, 0.5, XR2, 0.8)], 1.0, [0, 1]))
    # length 0.75 at start 0: (int) (0.75 - 1 + 0.5 - 1) = (int) -0.75 = 0
    # (toward zero): row 0, equal: suppressed; at start 2: (int) 1.25 = 1
    # < 2: none, kept
    c.append(case("length 0.75 at row 0: one row (truncation toward zero)",
                  5, [(0, 5, Z5, 0.9), (0, 0.75, [0, 100, 100, 100, 100], 0.8),
                      (0.5, 0.75, XR2, 0.7)], 1.0, [0, 2]))
    # length 1.49 at start 2: 3.49 - 1 = 2.49 (float), + 0.5 = 2.99: row 2
    # alone (equal): suppressed; 1.5: (int) 3.0 = 3: rows 2, 3, dist 100
    # >= 2: kept
    c.append(case("length 1.49: one row", 5,
                  [(0, 5, Z5, 0.9), (0.5, 1.49, XR2, 0.8)], 1.0, [0]))
    c.append(case("length 1.5: two rows", 5,
                  [(0, 5, Z5, 0.9), (0.5, 1.5, XR2, 0.8)], 1.0, [0, 1]))
    # length 1.49999988 (1.5 - 2^-23): at start 0, 0.49999988 + 0.5 <
    # 1: row 0 alone, suppressed; S = 72 at start 64 (start_y 64/71):
    # 64 + 1.49999988 rounds to 65.5 in float32, end 65: rows 64, 65, dist
    # 100 >= 2: kept
    L = float(F(1.5 - 2 ** -23))
    c.append(case("length 1.5 - 2^-23 at row 0: one row", 5,
                  [(0, 5, Z5, 0.9), (0, L, [0, 100, 100, 100, 100], 0.8)],
                  1.0, [0]))
    x72 = np.zeros(72)
    x72[65:] = 100
    c.append(case("length 1.5 - 2^-23 at row 64 of 72: float32 start + "
                  "length, two rows", 72,
                  [(64 / 71, 8, np.zeros(72), 0.9), (64 / 71, L, x72, 0.8)],
                  1.0, [0, 1]))
    # negative lengths: start 2, length -3: (int) (-2 + 0.5 - 1) = -2;
    # start 0, length -0.25: (int) -1.75 = -1: no rows, kept
    c.append(case("negative length: no rows", 5,
                  [(0, 5, Z5, 0.9), (0.5, -3, Z5, 0.8), (0, -0.25, Z5, 0.7)],
                  1.0, [0, 1, 2]))
    # start_y 1: start 4, the last row; length 5: end 8, clipped to 4:
    # row 4 alone, where lane 1 equals lane 0
    c.append(case("start at the last row", 5,
                  [(1.0, 5, Z5, 0.9), (1.0, 3, [9, 9, 9, 9, 0], 0.8),
                   (0, 4, Z5, 0.7)], 1.0, [0, 2]))
    # lane 1: start 1, length 50: end 50 clipped to 4: rows 1..4 (not
    # 50), dist 4, threshold 4: kept; lane 2 the same with distance the
    # float above: 4 (1 + 2^-23) = 4 + 2^-21 > 4, suppressed
    c.append(case("a length past the last row: rows to n", 5,
                  [(0, 100, Z5, 0.9), (0.25, 50, [0, 1, 1, 1, 1], 0.8)],
                  1.0, [0, 1]))
    c.append(case("a length past the last row, threshold one float above",
                  5, [(0, 100, Z5, 0.9), (0.25, 50, [0, 1, 1, 1, 1], 0.8)],
                  above(1.0), [0]))
    # rows 0..1 and 3..4: e = 1 < s = 3, kept though equal; rows 0..2 and
    # 2..4: row 2 in common, equal: suppressed
    c.append(case("end < start: no rows in common", 5,
                  [(0, 2, Z5, 0.9), (0.75, 2, Z5, 0.8)], 1e6, [0, 1]))
    c.append(case("one row in common", 5,
                  [(0, 3, [0, 0, 0, 50, 50], 0.9),
                   (0.5, 3, [50, 50, 0, 0, 0], 0.8)], 1.0, [0]))
    # start_y 0.125 - 2^-27 (the float below 0.125): start_y 4 = 0.5 -
    # 2^-25 (exact), + 0.5 in double = 1 - 2^-25: start 0 (+ 0.5 in
    # float32 would round to 1): row 0 in common with lane 0, equal:
    # suppressed
    c.append(case("start_y n + 0.5 in double: start 0", 5,
                  [(0, 1, Z5, 0.9),
                   (0.125 - 2 ** -27, 1, [0, 100, 100, 100, 100], 0.8)],
                  1.0, [0]))
    # start_y 0.625: 2.5 + 0.5 = 3: start 3 (half up, not to even): row 3,
    # dist 100: kept
    c.append(case("start_y n = 2.5: start 3", 5,
                  [(0, 5, Z5, 0.9), (0.625, 1, [0, 0, 0, 100, 0], 0.8)],
                  1.0, [0, 1]))
    # start_y -0.3: -1.2 + 0.5 = -0.7, (int) 0: lane 1 takes part at row
    # 0 (kept, and suppresses lane 2 there; lane 3 is 50 away at row 0);
    # start_y -0.375: (int) -1.0 = -1: lane 0 takes no part, though its
    # score is the highest (floor would drop lane 1: [2, 3])
    c.append(case("negative start_y: truncation toward zero", 5,
                  [(-0.375, 5, Z5, 0.99), (-0.3, 1, [50, 0, 0, 0, 0], 0.95),
                   (0, 5, [50, 9, 9, 9, 9], 0.9), (0, 5, Z5, 0.8)],
                  1.0, [1, 3]))
    # start_y 1.1: 4.4 + 0.5 = 4.9: start 4, takes part (and suppresses
    # lane 2 at row 4); 1.125: 4.5 + 0.5 = 5 > 4: no part; lane 3: rows
    # 0..3, none in common with lane 1
    c.append(case("start beyond the last row", 5,
                  [(1.125, 5, Z5, 0.99), (1.1, 5, Z5, 0.9), (1.0, 2, Z5, 0.8),
                   (0, 4, Z5, 0.7)], 1.0, [1, 3]))
    # no part: NaN and infinite scores, start_y inf and NaN, length NaN,
    # |length| 2^20 + 1/8; part: length 2^20 (rows 0..4, suppresses lane
    # 7) and -2^20 (no rows, kept)
    c.append(case("non-finite and out-of-range values take no part", 5,
                  [(0, 5, Z5, NAN), (0, 5, Z5, INF), (INF, 5, Z5, 0.9),
                   (0, NAN, Z5, 0.95), (0, BIG + 0.125, Z5, 0.97),
                   (0, -BIG - 0.125, Z5, 0.96), (0, BIG, Z5, 0.5),
                   (0, 5, Z5, 0.4), (0, -BIG, Z5, 0.3), (NAN, 5, Z5, 0.99),
                   (0, 5, Z5, -INF)], 1.0, [6, 8]))
    # logits and start_x are not read: NaN there changes nothing
    c.append(case("logits and start_x ignored", 5,
                  [(0, 5, Z5, 0.9, dict(l0=NAN, l1=INF, start_x=NAN)),
                   (0, 5, Z5, 0.8, dict(l0=-INF, l1=NAN, start_x=INF))],
                  1.0, [0]))
    # NaN offset in a shared row: dist NaN, not below: kept; outside the
    # shared rows: not read, suppressed; inf - inf = NaN: kept; 3e38 -
    # (-3e38) overflows to inf: kept
    c.append(case("non-finite offsets", 5,
                  [(0, 3, [0, 0, 0, NAN, NAN], 0.9),
                   (0, 5, [0, NAN, 0, 0, 0], 0.8),
                   (0, 5, [0, 0, 0, INF, 0], 0.7)], 1e6, [0, 1]))
    c.append(case("infinite offsets", 5,
                  [(0, 5, [INF] * 5, 0.9), (0, 5, [INF] * 5, 0.8),
                   (0, 5, [3e38] * 5, 0.7), (0, 5, [-3e38] * 5, 0.6)],
                  1e30, [0, 1, 2, 3]))
    # far beyond a 640-pixel frame: x -3000 and -3000.5, dist 2.5 =
    # 0.5 * 5: kept; distance the float above 0.5: suppressed
    c.append(case("offsets beyond the frame, equal to the threshold", 5,
                  [(0, 5, [-3000] * 5, 0.9), (0, 5, [-3000.5] * 5, 0.8),
                   (0, 5, [1e6] * 5, 0.7)], 0.5, [0, 1, 2]))
    c.append(case("offsets beyond the frame, one float above", 5,
                  [(0, 5, [-3000] * 5, 0.9), (0, 5, [-3000.5] * 5, 0.8),
                   (0, 5, [1e6] * 5, 0.7)], above(0.5), [0, 2]))
    # equal scores: the lower index first
    c.append(case("equal scores: the lower index", 5,
                  [(0, 5, Z5, 0.5), (0, 5, Z5, 0.5)], 1.0, [0]))
    c.append(case("equal scores, -0 and +0: the lower index", 5,
                  [(0, 5, Z5, -0.0), (0, 5, Z5, 0.0)], 1.0, [0]))
    # a chain 0 - 1 - 2 (dist 3 < 5 each, 0 and 2: 6 >= 5), equal scores:
    # 0 kept, 1 dropped by 0, 2 kept (1 is not kept); the middle lane first
    # by index: it drops both
    c.append(case("a dropped lane suppresses nothing", 5,
                  [(0, 5, Z5, 0.5), (0, 5, [0.6] * 5, 0.5),
                   (0, 5, [1.2] * 5, 0.5)], 1.0, [0, 2]))
    c.append(case("the middle lane first by index", 5,
                  [(0, 5, [0.6] * 5, 0.5), (0, 5, Z5, 0.5),
                   (0, 5, [1.2] * 5, 0.5)], 1.0, [0]))
    c.append(case("scores before indices", 5,
                  [(0, 5, Z5, 0.5), (0, 5, [0.6] * 5, 0.5),
                   (0, 5, [1.2] * 5, 0.6)], 1.0, [2, 0]))
    # max_detections counts kept lanes: 1 is suppressed, 0, 2, 3 kept, cap 2
    far = [(0, 5, Z5, 0.9), (0, 5, Z5, 0.85), (0, 5, [100] * 5, 0.8),
           (0, 5, [200] * 5, 0.7)]
    c.append(case("max_detections 2", 5, far, 1.0, [0, 2], max_det=2))
    c.append(case("max_detections 0: no cap", 5, far, 1.0, [0, 2, 3]))
    # S = 2, n = 1: start_y 0.5: 0.5 + 0.5 = 1: row 1; lane 1 shares row 1
    # with lane 0, equal: suppressed; lane 2 row 0, dist 0.75 = 0.75 * 1:
    # kept
    c.append(case("S = 2", 2,
                  [(0, 2, [0, 0], 0.9), (0.5, 1, [5, 0], 0.8),
                   (0, 1, [0.75, 9], 0.7)], 0.75, [0, 2]))
    # S = 3: start_y 0.75: 1.5 + 0.5 = 2: row 2; beyond: 1.25: 3 > 2
    c.append(case("S = 3", 3,
                  [(0, 3, [0, 0, 0], 0.9), (0.75, 2, [7, 7, 0.5], 0.8),
                   (1.25, 1, [0, 0, 0], 0.95)], 0.5, [0, 1]))
    return c


def check_hand(tool, backend):
    n_cases = sens = 0
    for name, props, scores, distance, max_det, want in hand_cases():
        n_cases += 1
        got = {"scalar": lc.greedy(props, scores, distance, max_det),
               "arrays": lc.greedy_matrix(props, scores, distance, max_det)}
        if HAVE_TORCH:
            got["torch"] = lc.torch_nms(props, scores, distance, max_det)
        if tool is not None:
            got["cudanms-tool"] = tool.nms(props, scores, distance, max_det)
        bad = {k: v for k, v in got.items() if v != want}
        print("golden-lanes: %-62s kept %s%s" % (
            name, want, "" if not bad else "  GOT %s" % bad))
        if bad:
            fail("%s: want %s, got %s" % (name, want, bad))
        # does the case tell < from <=?
        n = props.shape[1] - 6
        le = lc.greedy(props, scores, distance, max_det,
                       sup=lambda i, j: lc.suppresses(props[i], props[j],
                                                      distance, n, False))
        sens += le != want
    print("golden-lanes: %d hand cases; %d of them would fail with <= "
          "instead of <" % (n_cases, sens))
    if sens < 5:
        fail("only %d hand cases tell < from <=" % sens)
    return n_cases


def check_decode(tool, rng, n_sets):
    """cudanms-tool decode --layout laneatt (cnms_detect, layout laneatt):
    the anchors and confidences of the lanes returned, in order, against
    the reference's decode (lanes_common.decode, with the points rule).
    Returns the sets run."""
    if tool is None:
        return 0
    Z5 = [0, 0, 0, 0, 0]
    # scores: lane 0 l0 = l1: 1 / (1 + e^0) = 0.5 exactly; lane 1
    # 1 / (1 + e^-2) = 0.880797; lane 2 a NaN logit: no score; lane 3
    # e^800 = inf: 0; lane 4 e^-800 = 0: 1 exactly; lane 5 lane 1's x,
    # 1 / (1 + e^-1) = 0.731059: suppressed by lane 1
    lanes = [(0, 5, Z5, dict(l0=0.0, l1=0.0)),
             (0, 5, [100] * 5, dict(l0=-1.0, l1=1.0)),
             (0, 5, [200] * 5, dict(l0=np.nan, l1=0.0)),
             (0, 5, [300] * 5, dict(l0=800.0, l1=0.0)),
             (0, 5, [400] * 5, dict(l0=-800.0, l1=0.0)),
             (0, 5, [100] * 5, dict(l0=-0.5, l1=0.5))]
    props = np.stack([lc.proposal(5, *ln[:3], **ln[3]) for ln in lanes])
    s1 = float(F(1.0 / (1.0 + np.exp(-2.0))))
    for thr, want in ((0.5, [(4, 1.0), (1, s1)]),
                      (below(0.5), [(4, 1.0), (1, s1), (0, 0.5)]),
                      (0.0, [(4, 1.0), (1, s1), (0, 0.5)]),
                      (0.95, [(4, 1.0)])):
        ref = lc.decode(props, thr, 1.0, 0, lc.DECODE_WIDTH)
        got = tool.decode(props[None], thr, 1.0, 0)
        print("golden-lanes: decode, hand scores, threshold %.9g: %s" % (
            thr, got))
        if ref != want or got != want:
            fail("decode, threshold %.9g: want %s, reference %s, "
                 "cudanms %s" % (thr, want, ref, got))
    same = kept = short = 0
    for i in range(n_sets):
        S = (72, 72, 10)[i % 3]
        N = int(rng.integers(800, 1001)) if i % 4 == 3 else \
            int(rng.integers(20, 400))
        props, _ = lc.laneatt_like(rng, S, N, integer=i % 2 == 1)
        props[:, 0] = rng.normal(0, 2, N)
        props[:, 1] = rng.normal(0, 2, N)
        f16 = i % 3 == 1
        tensor = props.astype(np.float16) if f16 else props
        if i % 5 != 2:
            tensor = tensor[None]
        thr = (0.3, 0.5, 0.7)[i % 3]
        distance = float(rng.choice([5.0, 15.0, 50.0]))
        max_det = 4 if i % 4 == 1 else 0
        want = lc.decode(tensor.reshape(N, 5 + S).astype(F), thr, distance,
                         max_det, lc.DECODE_WIDTH)
        got = tool.decode(tensor, thr, distance, max_det)
        kept += len(want)
        short += len(lc.decode(tensor.reshape(N, 5 + S).astype(F), thr,
                               distance, max_det)) - len(want)
        label = "decode set %d: S=%d N=%d %s %s threshold=%g distance=%g " \
            "max_det=%d" % (i, S, N, "f16" if f16 else "f32",
                            list(tensor.shape), thr, distance, max_det)
        if got == want:
            same += 1
        else:
            k = first_diff(got, want)
            fail("%s: kept %d, the reference %d; first difference at %d: "
                 "%s / %s" % (label, len(got), len(want), k, got[k:][:2],
                              want[k:][:2]))
    print("golden-lanes: decode: %d/%d random tensors identical to the "
          "reference (anchors and confidences, in order; %d lanes returned, "
          "%d kept lanes left out by the points rule)" % (same, n_sets, kept,
                                                          short))
    if n_sets >= 12 and short == 0:
        fail("decode: no kept lane with fewer than 2 points in the frame")
    return n_sets


def make_random(rng, i):
    """One seeded set: proposals, scores, distance, max_det, label."""
    S = 72
    if i % 10 == 3:
        S = 2
    elif i % 10 == 6:
        S = 3
    elif i % 10 == 8:
        S = 10
    if i < 4:
        N = i + 1
    elif i % 7 == 5:
        N = int(rng.integers(800, 1001))
    else:
        N = int(np.exp(rng.uniform(np.log(5), np.log(600))))
    integer = i % 3 == 1
    props, scores = lc.laneatt_like(rng, S, N, integer=integer)
    if integer:
        distance = float(rng.choice([1, 2, 3, 5, 10, 15, 30, 50]))
    else:
        distance = float(F(rng.choice([0.5, 5, 15, 50, 100]) *
                           rng.uniform(0.6, 1.4)))
    if i % 4 == 2:  # ties of score
        scores = (np.round(scores * 8) / 8).astype(F)
    if i % 5 == 4 and N > 2:  # duplicates, and lanes that take no part
        d = rng.integers(0, N, max(1, N // 10))
        s = rng.integers(0, N, len(d))
        props[d], scores[d] = props[s], scores[s]
        z = rng.integers(0, N, max(1, N // 20))
        col = rng.choice([2, 4], len(z))
        props[z, col] = rng.choice([np.nan, np.inf, -5.0, 3.0, 2e6], len(z))
        scores[rng.integers(0, N, max(1, N // 40))] = np.nan
    max_det = 4 if i % 6 == 5 else 0
    label = "set %d: S=%d N=%d distance=%.9g integer=%s max_det=%d" % (
        i, S, N, distance, integer, max_det)
    return props, scores, distance, max_det, label


def check_pairs(rng, props, scores, distance, M, extra, label):
    """The scalar reference against the array reference, pair by pair:
    every pair of a small set, else a sample and every pair at the
    threshold exactly."""
    part = lc.rows_of(props, scores)[0]
    idx = np.flatnonzero(part)
    dist, thr, s, e = extra
    n = props.shape[1] - 6
    if len(idx) <= 40:
        pairs = [(a, b) for a in idx for b in idx]
    else:
        pairs = list(zip(rng.choice(idx, 600), rng.choice(idx, 600)))
        eq = np.argwhere((dist == thr) & (e >= s) & part[:, None] &
                         part[None, :])
        pairs += [tuple(p) for p in eq[:200]]
    for a, b in pairs:
        want = lc.suppresses(props[a], props[b], distance, n)
        if want != bool(M[a, b]):
            fail("%s: pair (%d, %d): scalar %s, arrays %s" % (
                label, a, b, want, bool(M[a, b])))
            return len(pairs)
    return len(pairs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("workdir")
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--decode-sets", type=int, default=12)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--reference-only", action="store_true",
                    help="check the references alone (no cudanms-tool)")
    a = ap.parse_args()
    tool = None if a.reference_only else lc.Tool(a.tool, a.workdir, a.backend)

    n_hand = check_hand(tool, a.backend)

    rng = np.random.default_rng(a.seed)
    same = lanes = kept_total = pairs = at_thr = le_differs = 0
    by_S = {}
    for i in range(a.cases):
        props, scores, distance, max_det, label = make_random(rng, i)
        M, extra = lc.sup_matrix(props, scores, distance)
        want = lc.greedy(props, scores, distance, max_det,
                         sup=lambda p, q: bool(M[p, q]))
        pairs += check_pairs(rng, props, scores, distance, M, extra, label)
        if len(props) <= 120:
            sc = lc.greedy(props, scores, distance, max_det)
            if sc != want:
                fail("%s: scalar greedy %s, arrays %s" % (label, sc, want))
        if HAVE_TORCH:
            tt = lc.torch_nms(props, scores, distance, max_det)
            if tt != want:
                fail("%s: torch kept %d lanes, the reference %d (first "
                     "difference at %d)" % (label, len(tt), len(want),
                                             first_diff(tt, want)))
        dist, thr, s, e = extra
        part = lc.rows_of(props, scores)[0]
        at_thr += int(((dist == thr) & (e >= s) & part[:, None] &
                       part[None, :]).sum())
        le = lc.greedy_matrix(props, scores, distance, max_det, strict=False)
        le_differs += le != want
        got = want if tool is None else tool.nms(props, scores, distance,
                                                 max_det)
        S = props.shape[1] - 5
        by_S[S] = by_S.get(S, 0) + 1
        lanes += len(props)
        kept_total += len(want)
        if got == want:
            same += 1
        else:
            fail("%s: cudanms kept %d lanes, the reference %d (first "
                 "difference at %d: %s / %s)" % (
                     label, len(got), len(want), first_diff(got, want),
                     got[first_diff(got, want):][:3],
                     want[first_diff(got, want):][:3]))
    print("golden-lanes: %d/%d random sets identical to the reference "
          "(%s; %d proposals, %d kept)%s" % (
              same, a.cases, ", ".join("S=%d: %d" % kv
                                       for kv in sorted(by_S.items())),
              lanes, kept_total,
              " [reference only]" if tool is None else ""))
    print("golden-lanes: %d pairs checked scalar against arrays; %d "
          "overlapping pairs at dist == threshold exactly; %d sets whose "
          "kept list <= would change; torch %s" % (
              pairs, at_thr, le_differs,
              "checked on every set" if HAVE_TORCH else "not importable"))
    n_dec = check_decode(tool, np.random.default_rng(a.seed + 1),
                         a.decode_sets)
    print("golden-lanes: %d hand cases, %d random sets, %d decode tensors, "
          "%d failures" % (n_hand, a.cases, n_dec, len(failures)))
    return 1 if failures else 0


def first_diff(a, b):
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return k
    return min(len(a), len(b))


if __name__ == "__main__":
    sys.exit(main())

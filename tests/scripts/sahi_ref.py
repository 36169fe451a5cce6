#!/usr/bin/env python3
"""An independent NumPy reference of how SAHI (github obss/sahi) slices a
frame and merges the detections of the slices (sliced inference).

The rules were read from SAHI's code at commit SAHI_COMMIT (after release
0.12.6); docs/sahi-rules.md states each one with the file and function it
comes from. This file is written from those rules, not copied: it keeps
SAHI's structure where the structure decides the result (the order of the
boxes, which box is visited when, the order of each merge list, float32
against float64).

    slice_bboxes(h, w, slice_h, slice_w, overlap_h, overlap_w)
        the grid of slices, [x1, y1, x2, y2] each, in SAHI's order.
    slice_to_frame(boxes_local, shift, frame_h, frame_w)
        a slice's boxes clipped and shifted into the frame as SAHI does.
    combine_sliced(frame_h, frame_w, slices, slice_preds, full_pred, ...)
        get_sliced_prediction's assembly: the slices' boxes in order, the
        full-frame prediction last, then the postprocess.
    merge(boxes, scores, classes, postprocess, metric, threshold,
          class_agnostic)
        SAHI's NMS / NMM / GREEDYNMM postprocess, output in SAHI's order.

Only NumPy is needed. Run it to self-check (exit 1 on a failure):
    /usr/bin/python3 tests/scripts/sahi_ref.py
"""

import sys

import numpy as np

SAHI_COMMIT = "9a4e5696bc7995ffc3c075460e14e2d96ae1b412"

POSTPROCESSES = ("nms", "nmm", "greedy-nmm")
METRICS = ("iou", "ios")
# 'numpy' is SAHI's always-present backend and the one this reference is
# about. 'numba' and 'torchvision' reproduce the places where SAHI's other
# backends decide differently (docs/sahi-rules.md, c.9): 'torchvision' is
# torchvision's CUDA NMS kernel (what SAHI's auto choice runs on a GPU),
# 'torchvision-cpu' its CPU kernel, which compares in double.
BACKENDS = ("numpy", "numba", "torchvision", "torchvision-cpu")

# get_sliced_prediction switches to NMS/IOU below this model confidence.
LOW_MODEL_CONFIDENCE = 0.1


# ---------------------------------------------------------------------------
# (a) the grid of slices: sahi/slicing.py
# ---------------------------------------------------------------------------

def _resolution_factor(resolution):
    """calc_resolution_factor: the smallest e with 2**e >= resolution, less 1."""
    e = 0
    while 2 ** e < resolution:
        e += 1
    return e - 1


def auto_slice_params(h, w):
    """get_auto_slice_params: (x_overlap, y_overlap, slice_w, slice_h) in
    pixels, from the frame's pixel count and orientation."""
    factor = _resolution_factor(h * w)
    if factor <= 18:
        level = None                      # 'low': one slice, the frame
    elif factor < 21:
        level = (1, 0.8)                  # 'medium': (slide, ratio)
    elif factor < 24:
        level = (2, 0.4)                  # 'high'
    else:
        level = (4, 0.4)                  # 'ultra-high'
    if level is None:
        rows = cols = 1
        ratio = 1
    else:
        slide, ratio = level
        if w < h:                         # vertical
            rows, cols = slide, slide * 2
        elif w > h:                       # horizontal
            rows, cols = slide * 2, slide
        else:                             # square
            rows, cols = slide, slide
    # SAHI's names: 'split_row' divides the width, 'split_col' the height.
    slice_h = h // cols
    slice_w = w // rows
    return int(slice_w * ratio), int(slice_h * ratio), slice_w, slice_h


def _axis_spans(size, slc, overlap):
    """One axis of get_slice_bboxes' loops: windows of slc pixels, each
    starting overlap pixels before the end of the previous one; the first
    one to pass the edge is moved back to end at it, and is the last."""
    spans = []
    lo = hi = 0
    while hi < size:
        hi = lo + slc
        if hi > size:
            hi = size
            lo = max(0, size - slc)
        spans.append((lo, hi))
        lo = hi - overlap
    return spans


def slice_bboxes(h, w, slice_h=None, slice_w=None, overlap_h=0.2,
                 overlap_w=0.2, auto_slice_resolution=True):
    """get_slice_bboxes: [[x1, y1, x2, y2], ...], row by row from the top,
    left to right in a row. A slice size of None or 0 means the automatic
    parameters (when auto_slice_resolution)."""
    if slice_h and slice_w:
        if overlap_h is not None and overlap_h >= 1.0:
            raise ValueError("Overlap ratio must be less than 1.0")
        if overlap_w is not None and overlap_w >= 1.0:
            raise ValueError("Overlap ratio must be less than 1.0")
        # int() truncates toward zero: 0.2 * 512 = 102.4 -> 102, and
        # 0.29 * 100 = 28.999999999999996 -> 28.
        y_overlap = int((overlap_h if overlap_h is not None else 0.2) * slice_h)
        x_overlap = int((overlap_w if overlap_w is not None else 0.2) * slice_w)
    elif auto_slice_resolution:
        x_overlap, y_overlap, slice_w, slice_h = auto_slice_params(h, w)
        if slice_w <= 0 or slice_h <= 0:
            # SAHI's loop never ends here (docs/sahi-rules.md, d.8).
            raise ValueError("auto slice size 0: SAHI loops forever")
    else:
        raise ValueError("no slice size and auto_slice_resolution is off")
    xs = _axis_spans(w, slice_w, x_overlap)
    ys = _axis_spans(h, slice_h, y_overlap)
    return [[x0, y0, x1, y1] for (y0, y1) in ys for (x0, x1) in xs]


# ---------------------------------------------------------------------------
# (b) a slice's boxes into the frame; the assembly of get_sliced_prediction
# ---------------------------------------------------------------------------

def slice_to_frame(boxes_local, shift, frame_h, frame_w):
    """UltralyticsDetectionModel._create_object_prediction_list_from_
    original_predictions, then ObjectAnnotation.__init__, then
    ObjectPrediction.get_shifted_object_prediction.

    In slice coordinates: every coordinate max(0, .); x1, x2 min(frame_w, .)
    and y1, y2 min(frame_h, .) -- the FRAME's size, not the slice's; a box
    without x1 < x2 and y1 < y2 after that is dropped. Then + (shift_x,
    shift_y), in float64, with no clipping after the shift.

    Returns (frame boxes [M, 4] float64, kept mask [N] bool)."""
    b = np.asarray(boxes_local, dtype=np.float64).reshape(-1, 4)
    b = np.maximum(b, 0.0)
    b[:, 0] = np.minimum(b[:, 0], frame_w)
    b[:, 1] = np.minimum(b[:, 1], frame_h)
    b[:, 2] = np.minimum(b[:, 2], frame_w)
    b[:, 3] = np.minimum(b[:, 3], frame_h)
    kept = (b[:, 0] < b[:, 2]) & (b[:, 1] < b[:, 3])
    b = b[kept]
    b[:, [0, 2]] += shift[0]
    b[:, [1, 3]] += shift[1]
    return b, kept


def combine_sliced(frame_h, frame_w, slices, slice_preds, full_pred=None,
                   postprocess="greedy-nmm", metric="ios", threshold=0.5,
                   class_agnostic=False, perform_standard_pred=True,
                   model_confidence=None, force_postprocess_type=False,
                   backend="numpy"):
    """get_sliced_prediction (sahi/predict.py), for boxes.

    slices: slice_bboxes(...); slice_preds[i] = (boxes in slice i's
    coordinates, scores, classes) in the model's order; full_pred the
    same for the whole frame (shift 0), or None. Defaults are SAHI's:
    GREEDYNMM, IOS, 0.5, per category. Returns merge()'s triple."""
    if (not force_postprocess_type and model_confidence is not None
            and model_confidence < LOW_MODEL_CONFIDENCE
            and postprocess != "nms"):
        postprocess, metric = "nms", "iou"
    boxes, scores, classes = [], [], []

    def add(pred, shift):
        b, s, c = pred
        fb, kept = slice_to_frame(b, shift, frame_h, frame_w)
        boxes.extend(fb.tolist())
        scores.extend(np.asarray(s, dtype=np.float64).reshape(-1)[kept].tolist())
        classes.extend(np.asarray(c).reshape(-1)[kept].tolist())

    for (x0, y0, _, _), pred in zip(slices, slice_preds):
        add(pred, (x0, y0))
    if len(slices) > 1 and perform_standard_pred and full_pred is not None:
        add(full_pred, (0, 0))
    if len(boxes) > 1:
        return merge(boxes, scores, classes, postprocess, metric, threshold,
                     class_agnostic, backend=backend)
    return (np.asarray(boxes, dtype=np.float64).reshape(-1, 4),
            np.asarray(scores, dtype=np.float64), np.asarray(classes, dtype=np.int64))


# ---------------------------------------------------------------------------
# (c) the postprocess: sahi/postprocess/{combine,_numpy_backend,utils}.py
# ---------------------------------------------------------------------------

def _pair_metric(b, metric, dtype):
    """compute_metric_matrix: the N x N IoU or IoS in one dtype, each step
    rounded to it, 0 where the denominator is not > 0 (_safe_ratio)."""
    b = b.astype(dtype)
    x1, y1, x2, y2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    area = (x2 - x1) * (y2 - y1)
    zero = dtype(0)
    iw = np.maximum(zero, np.minimum(x2[:, None], x2[None, :])
                    - np.maximum(x1[:, None], x1[None, :]))
    ih = np.maximum(zero, np.minimum(y2[:, None], y2[None, :])
                    - np.maximum(y1[:, None], y1[None, :]))
    inter = iw * ih
    if metric == "iou":
        den = (area[:, None] + area[None, :]) - inter
    else:
        den = np.minimum(area[:, None], area[None, :])
    out = np.zeros(inter.shape, dtype=dtype)
    np.divide(inter, den, out=out, where=den > zero)
    return out


def _matches(p32, metric, threshold, backend, op):
    """The first pass's match matrix, as each backend decides it."""
    if backend == "numba" and op in ("nms", "greedy-nmm"):
        # _nms_numba_inner / _greedy_nmm_numba_inner: float64 metric
        # against the float64 threshold.
        return _pair_metric(p32[:, :4].astype(np.float64), metric,
                            np.float64) >= np.float64(threshold)
    if backend == "numba":
        # nmm_numba: float64 matrix rounded to float32, float32 compare.
        m = _pair_metric(p32[:, :4].astype(np.float64), metric,
                         np.float64).astype(np.float32)
    else:
        m = _pair_metric(p32[:, :4], metric, np.float32)
    # A float32 array against a Python float compares in float32, in
    # NumPy 1.x (value-based casting) and 2.x (NEP 50) alike.
    return m >= np.float32(threshold)


def _score_order(p32):
    """_score_tiebreak_order: np.lexsort((y2, x2, y1, x1, -score)): score
    descending, then x1, y1, x2, y2 ascending (float32 values), then the
    input index (lexsort is stable)."""
    return np.lexsort((p32[:, 3], p32[:, 2], p32[:, 1], p32[:, 0], -p32[:, 4]))


def _nms(p32, metric, threshold, backend):
    if backend.startswith("torchvision") and metric == "iou" and threshold > 0:
        # nms_torchvision -> torchvision.ops.nms: score order from
        # torch's sort (taken as stable here: index order on ties), no
        # coordinate tie-break, suppression when the float32 IoU is
        # STRICTLY above the threshold: float32 in the CUDA kernel, the
        # float32 IoU widened to double against the double in the CPU one.
        order = np.argsort(-p32[:, 4], kind="stable")
        iou = _pair_metric(p32[:, :4], "iou", np.float32)
        if backend == "torchvision-cpu":
            over = iou.astype(np.float64) > np.float64(threshold)
        else:
            over = iou > np.float32(threshold)
    else:
        order = _score_order(p32)
        over = _matches(p32, metric, threshold, backend, "nms")
    keep = []
    suppressed = np.zeros(len(p32), dtype=bool)
    for i in order:
        if suppressed[i]:
            continue
        keep.append(int(i))
        suppressed |= over[i]
    return keep


def _greedy_nmm(p32, metric, threshold, backend):
    """greedy_nmm_from_matrix: each unsuppressed box in score order keeps
    itself and takes every later unsuppressed box matching IT (its own
    box, not a merged one); the merge list is in score order."""
    order = _score_order(p32)
    match = _matches(p32, metric, threshold, backend, "greedy-nmm")
    suppressed = np.zeros(len(p32), dtype=bool)
    groups = {}
    for pos, i in enumerate(order):
        if suppressed[i]:
            continue
        rest = order[pos + 1:]
        rest = rest[~suppressed[rest]]
        taken = rest[match[i, rest]]
        suppressed[taken] = True
        groups[int(i)] = [int(j) for j in taken]
    return groups


def _nmm(p32, metric, threshold, backend):
    """nmm_from_matrix: boxes visited in score order; an unclaimed box is a
    keeper; every box (keeper or claimed) claims, for its keeper, the
    unclaimed boxes it 'dominates' and matches, in ascending input index.
    i dominates j: score_i > score_j, or equal scores and NOT
    (x1, y1, x2, y2)_i < (x1, y1, x2, y2)_j lexicographically."""
    n = len(p32)
    order = _score_order(p32)
    if threshold <= 0:
        return _nmm_match_all(p32, order)
    match = _matches(p32, metric, threshold, backend, "nmm")
    s = p32[:, 4]
    lower = s[:, None] > s[None, :]
    equal = s[:, None] == s[None, :]
    i_before_j = np.zeros((n, n), dtype=bool)
    still_equal = np.ones((n, n), dtype=bool)
    for col in range(4):
        c = p32[:, col]
        i_before_j |= still_equal & (c[:, None] < c[None, :])
        still_equal &= c[:, None] == c[None, :]
    dominates = ~np.eye(n, dtype=bool) & (lower | (equal & ~i_before_j))
    claims = dominates & match
    keeper_of = np.full(n, -1, dtype=np.int64)
    groups = {}
    for i in order:
        i = int(i)
        if keeper_of[i] < 0:
            keeper_of[i] = i
            groups[i] = []
        k = int(keeper_of[i])
        for j in np.flatnonzero(claims[i]):
            if keeper_of[j] < 0:
                groups[k].append(int(j))
                keeper_of[j] = k
    return groups


def _nmm_match_all(p32, order):
    """nmm_match_all, which every backend takes when threshold <= 0 (every
    pair matches): the first box in score order takes every box of a lower
    float32 score and its own exact duplicates (same score, same
    coordinates), ascending index; every other box of the top score is a
    keeper with nothing merged, even where it has an exact duplicate of
    its own, which the general loop would merge (docs/sahi-rules.md, d.6)."""
    top = int(order[0])
    s = p32[:, 4]
    tied = s == s[top]
    duplicate = tied & np.all(p32[:, :4] == p32[top, :4], axis=1)
    claimed = ~tied | duplicate
    claimed[top] = False
    groups = {top: [int(j) for j in np.flatnonzero(claimed)]}
    for i in order:
        if tied[i] and not duplicate[i]:
            groups[int(i)] = []
    return groups


_FIRST_PASS = {"nms": _nms, "greedy-nmm": _greedy_nmm, "nmm": _nmm}


def recheck(box_a, box_b, metric, threshold):
    """utils.has_match: the merge-time test, in float64 (np.array of the
    Python floats of the boxes), STRICTLY greater than the threshold; a
    zero denominator gives inf or nan (numpy scalar division), nan > t is
    False."""
    a = np.asarray(box_a, dtype=np.float64)
    b = np.asarray(box_b, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        area_a = (a[2] - a[0]) * (a[3] - a[1])
        area_b = (b[2] - b[0]) * (b[3] - b[1])
        wh = (np.minimum(a[2:], b[2:]) - np.maximum(a[:2], b[:2])).clip(min=0)
        inter = wh[0] * wh[1]
        if metric == "iou":
            value = inter / (area_a + area_b - inter)
        else:
            value = inter / np.minimum(area_a, area_b)
    return bool(value > threshold)


def merge(boxes, scores, classes, postprocess="greedy-nmm", metric="ios",
          threshold=0.5, class_agnostic=False, backend="numpy",
          return_groups=False):
    """SAHI's postprocess on frame boxes.

    boxes [N, 4] xyxy frame pixels (the float64 values SAHI's
    ObjectPredictions hold), scores [N], classes [N] integer category ids.
    Returns (boxes [M, 4] float64, scores [M] float64, classes [M] int64)
    in SAHI's output order; with return_groups also a list, per output,
    of (keeper index, [merged indices], [dropped indices]): the absorbed
    boxes that failed the merge-time re-check and so vanished."""
    postprocess = postprocess.lower().replace("_", "-")
    if postprocess == "greedynmm":
        postprocess = "greedy-nmm"
    metric = metric.lower()
    if postprocess not in POSTPROCESSES or metric not in METRICS:
        raise ValueError("postprocess %r / metric %r" % (postprocess, metric))
    if backend not in BACKENDS:
        raise ValueError("backend %r" % (backend,))
    b64 = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    s64 = np.asarray(scores, dtype=np.float64).reshape(-1)
    cls = np.asarray(classes).reshape(-1).astype(np.int64)
    n = len(b64)
    # ObjectPredictionList.tonumpy: one float32 (N, 6) array; the first
    # pass sees only these float32 values, category ids included.
    p32 = np.zeros((n, 6), dtype=np.float32)
    p32[:, :4] = b64
    p32[:, 4] = s64
    p32[:, 5] = cls
    first = _FIRST_PASS[postprocess]

    if class_agnostic:
        result = first(p32, metric, threshold, backend) if n else (
            [] if postprocess == "nms" else {})
    else:
        # _batched_apply: np.unique of the float32 ids, ascending; each
        # category alone; local indices mapped back.
        result = [] if postprocess == "nms" else {}
        for c in np.unique(p32[:, 5]):
            idx = np.flatnonzero(p32[:, 5] == c)
            local = first(p32[idx], metric, threshold, backend)
            if postprocess == "nms":
                result.extend(int(idx[k]) for k in local)
            else:
                for k, lst in local.items():
                    result[int(idx[k])] = [int(idx[j]) for j in lst]
        if postprocess == "nms":
            # Python's stable sort, reverse=True keeps equal scores in
            # insertion order (category ascending, then score order).
            result.sort(key=lambda i: p32[i, 4], reverse=True)

    out_b, out_s, out_c, groups = [], [], [], []
    if postprocess == "nms":
        for i in result:
            out_b.append(b64[i].tolist())
            out_s.append(float(s64[i]))
            out_c.append(int(cls[i]))
            groups.append((i, [], []))
    else:
        # combine._apply_merge: each merge list in its order, each entry
        # re-checked against the keeper as merged so far.
        for k, lst in result.items():
            box = b64[k].tolist()
            score = float(s64[k])
            cat = int(cls[k])
            merged, dropped = [], []
            for j in lst:
                if recheck(box, b64[j], metric, threshold):
                    sj = float(s64[j])
                    # get_merged_category: the keeper's if its score is
                    # strictly higher, else the absorbed box's.
                    cat = cat if score > sj else int(cls[j])
                    # get_merged_score: max([s1, s2]).
                    score = max([score, sj])
                    # get_merged_bbox: the enclosing box.
                    box = [min(box[0], b64[j][0]), min(box[1], b64[j][1]),
                           max(box[2], b64[j][2]), max(box[3], b64[j][3])]
                    merged.append(j)
                else:
                    dropped.append(j)
            out_b.append([float(v) for v in box])
            out_s.append(score)
            out_c.append(cat)
            groups.append((k, merged, dropped))
    res = (np.asarray(out_b, dtype=np.float64).reshape(-1, 4),
           np.asarray(out_s, dtype=np.float64),
           np.asarray(out_c, dtype=np.int64))
    return res + (groups,) if return_groups else res


# ---------------------------------------------------------------------------
# self-checks, each expected value worked out by hand (docs/sahi-rules.md)
# ---------------------------------------------------------------------------

_passed = 0
_failed = []


def _check(name, got, want):
    global _passed
    if got == want:
        _passed += 1
    else:
        _failed.append(name)
        print("FAILED %s\n  got  %r\n  want %r" % (name, got, want))


def _run(boxes, scores, classes, pp, metric, thr, agnostic=True, backend="numpy"):
    b, s, c = merge(boxes, scores, classes, pp, metric, thr, agnostic, backend=backend)
    return b.tolist(), s.tolist(), c.tolist()


def _self_checks():
    # -- (a) slicing -------------------------------------------------------
    # overlap int(0.2 * 512) = 102; x: 0-512, 410-922, then 820-1332 is
    # moved back to 488-1000 and ends the row; rows alike.
    _check("grid 1000x1000/512", slice_bboxes(1000, 1000, 512, 512, 0.2, 0.2), [
        [0, 0, 512, 512], [410, 0, 922, 512], [488, 0, 1000, 512],
        [0, 410, 512, 922], [410, 410, 922, 922], [488, 410, 1000, 922],
        [0, 488, 512, 1000], [410, 488, 922, 1000], [488, 488, 1000, 1000]])
    # int(0.29 * 100) = int(28.999999999999996) = 28: steps of 72.
    _check("grid truncated overlap", slice_bboxes(100, 250, 100, 100, 0.29, 0.29), [
        [0, 0, 100, 100], [72, 0, 172, 100], [144, 0, 244, 100], [150, 0, 250, 100]])
    _check("grid slice > frame", slice_bboxes(300, 200, 512, 512), [[0, 0, 200, 300]])
    _check("grid exact fit, no overlap", slice_bboxes(100, 200, 100, 100, 0, 0),
           [[0, 0, 100, 100], [100, 0, 200, 100]])
    # auto: 1280 x 720 = 921600 -> factor 19, 'medium', horizontal:
    # slice 640 x 720, overlaps int(0.8 * 640) = 512, int(0.8 * 720) = 576.
    _check("auto params 720x1280", auto_slice_params(720, 1280), (512, 576, 640, 720))
    _check("auto grid 720x1280", slice_bboxes(720, 1280), [
        [0, 0, 640, 720], [128, 0, 768, 720], [256, 0, 896, 720],
        [384, 0, 1024, 720], [512, 0, 1152, 720], [640, 0, 1280, 720]])
    # 640 x 640 = 409600 -> factor 18, 'low': the frame itself.
    _check("auto grid 640x640", slice_bboxes(640, 640), [[0, 0, 640, 640]])
    # 1024 x 1024 = 2**20 -> factor 19 'medium' but square: one slice.
    _check("auto grid 1024x1024", slice_bboxes(1024, 1024), [[0, 0, 1024, 1024]])
    # 4096 x 2048 = 2**23 -> factor 22, 'high', vertical (w < h):
    # slice_h = 4096 // 4 = 1024, slice_w = 2048 // 2 = 1024, overlap 409.
    _check("auto params 4096x2048", auto_slice_params(4096, 2048), (409, 409, 1024, 1024))
    # 1 x 3,000,000: 'high', horizontal, slice height 1 // 2 = 0: SAHI's
    # loop never ends; the reference refuses.
    _check("auto params 1x3000000", auto_slice_params(1, 3000000), (300000, 0, 750000, 0))
    try:
        slice_bboxes(1, 3000000)
        _check("auto slice size 0 refused", False, True)
    except ValueError:
        _check("auto slice size 0 refused", True, True)
    try:
        slice_bboxes(100, 100, 50, 50, 1.0, 0.2)
        _check("overlap ratio 1.0 refused", False, True)
    except ValueError:
        _check("overlap ratio 1.0 refused", True, True)

    # -- (b) into the frame ------------------------------------------------
    # x1 -5 -> 0; x2 130 stays (clip is to the frame width 200, in slice
    # coordinates); shifted by 80 it ends at 210, past the frame.
    fb, kept = slice_to_frame([[-5, 10, 130, 50], [30, 5, 30, 9]], (80, 0), 200, 200)
    _check("slice box shifted, not clipped to the frame", fb.tolist(), [[80, 10, 210, 50]])
    _check("zero-width box dropped by the model", kept.tolist(), [True, False])

    # -- (c) metrics and the threshold ------------------------------------
    # IoU([0,0,30,10], [10,0,40,10]) = 200 / 400 = 0.5 exactly.
    A, B = [0, 0, 30, 10], [10, 0, 40, 10]
    for pp in POSTPROCESSES:
        # first pass 0.5 >= 0.5 absorbs B; the re-check 0.5 > 0.5 fails and
        # B vanishes: all three give A alone, unchanged.
        _check("IoU = thr, %s" % pp, _run([A, B], [0.9, 0.8], [0, 0], pp, "iou", 0.5),
               ([[0, 0, 30, 10]], [0.9], [0]))
        # IoU 210 / 390 = 0.538 > 0.5: merged (NMS: suppressed).
        want = ([[0, 0, 30, 10]], [0.9], [0]) if pp == "nms" else ([[0, 0, 39, 10]], [0.9], [0])
        _check("IoU > thr, %s" % pp, _run([A, [9, 0, 39, 10]], [0.9, 0.8], [0, 0], pp, "iou", 0.5), want)
        # IoU 190 / 410 = 0.463 < 0.5: both stay, score order.
        _check("IoU < thr, %s" % pp, _run([A, [11, 0, 41, 10]], [0.8, 0.9], [0, 0], pp, "iou", 0.5),
               ([[11, 0, 41, 10], [0, 0, 30, 10]], [0.9, 0.8], [0, 0]))
        # IoS([0,0,10,10], [5,0,25,20]) = 50 / 100 = 0.5 exactly: the
        # larger, higher box keeps; the small one vanishes everywhere.
        _check("IoS = thr, %s" % pp, _run([[0, 0, 10, 10], [5, 0, 25, 20]], [0.8, 0.9], [0, 0], pp, "ios", 0.5),
               ([[5, 0, 25, 20]], [0.9], [0]))
    _check("recheck iou at thr", recheck(A, B, "iou", 0.5), False)
    _check("recheck iou below thr", recheck(A, B, "iou", 0.4999), True)

    # -- equal scores ------------------------------------------------------
    # [5,0,15,10] (index 0) and [0,0,10,10] (index 1), both 0.9, IoU 50/150.
    # Ties go by x1 ascending, not by index: index 1 keeps.
    P, Q = [5, 0, 15, 10], [0, 0, 10, 10]
    _check("tie: x1 first (nms)", _run([P, Q], [0.9, 0.9], [1, 2], "nms", "iou", 0.3),
           ([[0, 0, 10, 10]], [0.9], [2]))
    # greedy: Q absorbs P; equal scores give the ABSORBED box's category.
    _check("tie: category of the absorbed (greedy)", _run([P, Q], [0.9, 0.9], [1, 2], "greedy-nmm", "iou", 0.3),
           ([[0, 0, 15, 10]], [0.9], [1]))
    # NMM: Q sorts first but does not 'dominate' P (Q's coordinates are
    # smaller); P, visited next, is a keeper; both stay.
    _check("tie: NMM merges neither", _run([P, Q], [0.9, 0.9], [1, 2], "nmm", "iou", 0.3),
           ([[0, 0, 10, 10], [5, 0, 15, 10]], [0.9, 0.9], [2, 1]))
    # x1 equal: y1 decides; then x2; then y2; then the input index.
    _check("tie: y1 second", _run([[0, 2, 10, 12], [0, 0, 10, 10]], [0.5, 0.5], [0, 0], "nms", "iou", 0.1),
           ([[0, 0, 10, 10]], [0.5], [0]))
    _check("tie: x2 third", _run([[0, 0, 12, 10], [0, 0, 10, 10]], [0.5, 0.5], [0, 0], "nms", "iou", 0.1),
           ([[0, 0, 10, 10]], [0.5], [0]))
    _check("tie: y2 fourth", _run([[0, 0, 10, 12], [0, 0, 10, 10]], [0.5, 0.5], [0, 0], "nms", "iou", 0.1),
           ([[0, 0, 10, 10]], [0.5], [0]))
    # identical boxes and scores: index order; NMM merges exact duplicates,
    # and the last one merged gives the category.
    D = [0, 0, 10, 10]
    _check("tie: duplicates by index (nms)", _run([D, D, D], [0.5] * 3, [7, 8, 9], "nms", "iou", 0.5),
           ([D], [0.5], [7]))
    for pp in ("nmm", "greedy-nmm"):
        _check("tie: duplicates merge, last category (%s)" % pp,
               _run([D, D, D], [0.5] * 3, [7, 8, 9], pp, "iou", 0.5), ([D], [0.5], [9]))
    # scores equal in float32, not in float64: the float32 tie makes x1
    # decide, so the LOWER float64 score keeps; the merged score is the max
    # of the float64 values and its category the absorbed box's.
    E = [[0, 0, 10, 10], [1, 0, 11, 10]]   # IoU 90 / 110
    _check("float32 score tie (nms)", _run(E, [0.9, 0.9000000001], [1, 2], "nms", "iou", 0.5),
           ([[0, 0, 10, 10]], [0.9], [1]))
    _check("float32 score tie (greedy)", _run(E, [0.9, 0.9000000001], [1, 2], "greedy-nmm", "iou", 0.5),
           ([[0, 0, 11, 10]], [0.9000000001], [2]))
    # a strictly higher keeper keeps its category.
    _check("category of the higher", _run(E, [0.9, 0.8], [1, 2], "greedy-nmm", "iou", 0.5),
           ([[0, 0, 11, 10]], [0.9], [1]))

    # -- chains: A~B, B~C, A!~C --------------------------------------------
    # IoU: A-B 60/140 = 0.43, B-C 0.43, A-C 20/180 = 0.11; thr 0.4.
    ch = [[0, 0, 10, 10], [4, 0, 14, 10], [8, 0, 18, 10]]
    cs = [0.9, 0.8, 0.7]
    _check("chain iou nms", _run(ch, cs, [0] * 3, "nms", "iou", 0.4),
           ([[0, 0, 10, 10], [8, 0, 18, 10]], [0.9, 0.7], [0, 0]))
    _check("chain iou greedy", _run(ch, cs, [0] * 3, "greedy-nmm", "iou", 0.4),
           ([[0, 0, 14, 10], [8, 0, 18, 10]], [0.9, 0.7], [0, 0]))
    # NMM claims C through B for A; the re-check of C against A+B
    # ([0,0,14,10]): 60 / 180 = 0.33 <= 0.4, so C is dropped: it vanishes.
    _check("chain iou nmm: C vanishes", _run(ch, cs, [0] * 3, "nmm", "iou", 0.4),
           ([[0, 0, 14, 10]], [0.9], [0]))
    # IoS: A-B 0.6, B-C 0.6, A-C 0.2; thr 0.5; re-check of C against A+B:
    # 60 / min(140, 100) = 0.6: the chain merges whole.
    _check("chain ios nms", _run(ch, cs, [0] * 3, "nms", "ios", 0.5),
           ([[0, 0, 10, 10], [8, 0, 18, 10]], [0.9, 0.7], [0, 0]))
    _check("chain ios greedy", _run(ch, cs, [0] * 3, "greedy-nmm", "ios", 0.5),
           ([[0, 0, 14, 10], [8, 0, 18, 10]], [0.9, 0.7], [0, 0]))
    _check("chain ios nmm", _run(ch, cs, [0] * 3, "nmm", "ios", 0.5),
           ([[0, 0, 18, 10]], [0.9], [0]))

    # -- the re-check against the growing box -----------------------------
    # K [10,0,20,10] .9, L [7,0,17,10] .85 (index 2), R [13,0,23,10] .8
    # (index 1): IoU 70/130 = 0.54 with K each, 40/160 with each other.
    # Greedy merges in score order: L, then R against [7,0,20,10]:
    # 70/160 = 0.44 -> R dropped. NMM's list is in index order: R first,
    # then L against [10,0,23,10]: 0.44 -> L dropped.
    K, R, L = [10, 0, 20, 10], [13, 0, 23, 10], [7, 0, 17, 10]
    _check("growing box, greedy (score order)", _run([K, R, L], [0.9, 0.8, 0.85], [0] * 3, "greedy-nmm", "iou", 0.5),
           ([[7, 0, 20, 10]], [0.9], [0]))
    _check("growing box, nmm (index order)", _run([K, R, L], [0.9, 0.8, 0.85], [0] * 3, "nmm", "iou", 0.5),
           ([[10, 0, 23, 10]], [0.9], [0]))
    _, _, _, g = merge([K, R, L], [0.9, 0.8, 0.85], [0] * 3, "greedy-nmm", "iou", 0.5, True,
                       return_groups=True)
    _check("groups: merged and dropped", g, [(0, [2], [1])])

    # -- nested boxes -------------------------------------------------------
    # small [10,10,30,30] .9 inside big [0,0,100,100] .6: IoS 1, IoU 0.04.
    nb, ns = [[0, 0, 100, 100], [10, 10, 30, 30]], [0.6, 0.9]
    _check("nested ios nms: the big box is suppressed", _run(nb, ns, [1, 2], "nms", "ios", 0.5),
           ([[10, 10, 30, 30]], [0.9], [2]))
    _check("nested ios greedy: grows to the big box", _run(nb, ns, [1, 2], "greedy-nmm", "ios", 0.5),
           ([[0, 0, 100, 100]], [0.9], [2]))
    _check("nested ios nmm", _run(nb, ns, [1, 2], "nmm", "ios", 0.5),
           ([[0, 0, 100, 100]], [0.9], [2]))
    _check("nested iou: both stay", _run(nb, ns, [1, 2], "greedy-nmm", "iou", 0.5),
           ([[10, 10, 30, 30], [0, 0, 100, 100]], [0.9, 0.6], [2, 1]))

    # -- zero-area boxes ----------------------------------------------------
    Z, W = [5, 5, 5, 15], [0, 0, 10, 20]
    for m in METRICS:
        # metric 0 (a zero denominator gives 0): nothing matches at 0.5.
        _check("zero-area %s: no match" % m, _run([Z, W], [0.95, 0.9], [0, 0], "greedy-nmm", m, 0.5),
               ([Z, W], [0.95, 0.9], [0, 0]))
        # identical degenerate boxes are not even suppressed by NMS.
        _check("zero-area duplicates kept (%s)" % m, _run([Z, Z], [0.9, 0.8], [0, 0], "nms", m, 0.5),
               ([Z, Z], [0.9, 0.8], [0, 0]))
        # threshold 0 matches every pair; the re-check then gives 0 > 0
        # (IoU) or nan > 0 (IoS): W vanishes, Z stays as it was.
        _check("zero-area, thr 0 (%s)" % m, _run([Z, W], [0.95, 0.9], [0, 0], "greedy-nmm", m, 0.0),
               ([Z], [0.95], [0]))
    # threshold 0 also matches disjoint boxes in the first pass, and the
    # re-check drops them: greedy NMM at 0 keeps one box of the frame.
    _check("thr 0, disjoint", _run([[0, 0, 10, 10], [50, 50, 60, 60]], [0.9, 0.8], [0, 0], "greedy-nmm", "iou", 0.0),
           ([[0, 0, 10, 10]], [0.9], [0]))

    # -- class modes ---------------------------------------------------------
    X = [[0, 0, 10, 10], [1, 0, 11, 10]]   # IoU 0.82
    _check("per category: no interaction", _run(X, [0.9, 0.8], [1, 2], "greedy-nmm", "iou", 0.5, False),
           ([[0, 0, 10, 10], [1, 0, 11, 10]], [0.9, 0.8], [1, 2]))
    _check("agnostic: merged, keeper's category", _run(X, [0.9, 0.8], [1, 2], "greedy-nmm", "iou", 0.5, True),
           ([[0, 0, 11, 10]], [0.9], [1]))
    # output order. Disjoint boxes, class 5 at x 0, class 3 at x 50.
    F = [[0, 0, 10, 10], [50, 0, 60, 10]]
    # NMS agnostic: equal scores by x1. Per category: categories ascending,
    # then a stable sort by score: class 3 first.
    _check("order nms agnostic", _run(F, [0.7, 0.7], [5, 3], "nms", "iou", 0.5, True)[2], [5, 3])
    _check("order nms per category", _run(F, [0.7, 0.7], [5, 3], "nms", "iou", 0.5, False)[2], [3, 5])
    # NMM/greedy per category: categories ascending, NOT re-sorted by score.
    for pp in ("nmm", "greedy-nmm"):
        _check("order %s per category" % pp, _run(F, [0.9, 0.6], [5, 3], pp, "iou", 0.5, False),
               ([[50, 0, 60, 10], [0, 0, 10, 10]], [0.6, 0.9], [3, 5]))
        _check("order %s agnostic" % pp, _run(F, [0.6, 0.9], [5, 3], pp, "iou", 0.5, True),
               ([[50, 0, 60, 10], [0, 0, 10, 10]], [0.9, 0.6], [3, 5]))
    # NMS on scores: per category, output sorted by score across classes.
    _check("order nms per category by score", _run(F, [0.6, 0.9], [3, 5], "nms", "iou", 0.5, False)[2], [5, 3])

    # -- precision ----------------------------------------------------------
    # B inside A: IoU = 6371423 / 9102033 = 0.69999998901... < 0.7, but its
    # float32 quotient is float32(0.7) and the compare is in float32: it
    # matches (numpy backend); the float64 re-check then fails: B vanishes.
    PA, PB = [0, 0, 3001, 3033], [0, 0, 2333, 2731]
    for pp in POSTPROCESSES:
        _check("float32 compare, %s" % pp, _run([PA, PB], [0.9, 0.8], [0, 0], pp, "iou", 0.7),
               ([PA], [0.9], [0]))
    # numba's NMS / greedy NMM compare in float64: no match, both stay.
    _check("numba float64 compare", _run([PA, PB], [0.9, 0.8], [0, 0], "nms", "iou", 0.7, backend="numba"),
           ([PA, PB], [0.9, 0.8], [0, 0]))
    # NMS returns the input boxes (float64), never their float32 copies.
    G = [[0.1, 0, 1234.56789, 10], [2000, 0, 2010, 10]]
    _check("nms keeps float64 boxes", _run(G, [0.9, 0.8], [0, 0], "nms", "iou", 0.5)[0], G)
    # torchvision's NMS for IOU: strict '>', ties by index, no x1 rule.
    _check("torchvision nms: IoU = thr kept", _run([A, B], [0.9, 0.8], [0, 0], "nms", "iou", 0.5, backend="torchvision"),
           ([A, B], [0.9, 0.8], [0, 0]))
    _check("torchvision nms: ties by index", _run([P, Q], [0.9, 0.9], [1, 2], "nms", "iou", 0.3, backend="torchvision"),
           ([P], [0.9], [1]))

    # threshold 0: NMM's match-all path. T sorts first; U and its exact
    # duplicate U2 tie with T: both stay keepers, unmerged (the general
    # loop would merge U2 into U). V (lower) goes to T, then fails the
    # re-check (IoU 0 > 0 is False) and vanishes.
    T, U, V = [0, 0, 10, 10], [20, 0, 30, 10], [50, 0, 60, 10]
    _check("thr 0 nmm: tied duplicates stay", _run([T, U, U, V], [0.9, 0.9, 0.9, 0.5], [0] * 4, "nmm", "iou", 0.0),
           ([T, U, U], [0.9, 0.9, 0.9], [0, 0, 0]))
    # IoU([6,6,8,10], [7,4,12,9]) = 3 / 30: float32 0.100000001 > 0.1 in
    # double (torchvision's CPU kernel suppresses), not > float32(0.1)
    # (its CUDA kernel keeps both).
    H1, H2 = [6, 6, 8, 10], [7, 4, 12, 9]
    _check("torchvision cuda: 3/30 at 0.1 kept", _run([H1, H2], [0.5, 0.3], [0, 0], "nms", "iou", 0.1, backend="torchvision")[0],
           [H1, H2])
    _check("torchvision cpu: 3/30 at 0.1 suppressed", _run([H1, H2], [0.5, 0.3], [0, 0], "nms", "iou", 0.1, backend="torchvision-cpu")[0],
           [H1])
    _check("numpy: 3/30 at 0.1 suppressed", _run([H1, H2], [0.5, 0.3], [0, 0], "nms", "iou", 0.1)[0], [H1])

    # -- a box across four slices --------------------------------------------
    # 200 x 200, slices 120, overlap int(0.2 * 120) = 24: x and y spans
    # 0-120 and 80-200. The object [60,60,140,140] is cut by each slice's
    # edges; each slice reports its part in its own coordinates, and the
    # full frame reports it whole at 0.5.
    sl = slice_bboxes(200, 200, 120, 120, 0.2, 0.2)
    _check("four slices", sl, [[0, 0, 120, 120], [80, 0, 200, 120], [0, 80, 120, 200], [80, 80, 200, 200]])
    preds = [([[60, 60, 120, 120]], [0.9], [0]),   # frame A [60,60,120,120]
             ([[0, 60, 60, 120]], [0.8], [0]),     # frame B [80,60,140,120]
             ([[60, 0, 120, 60]], [0.7], [0]),     # frame C [60,80,120,140]
             ([[0, 0, 60, 60]], [0.6], [0])]       # frame D [80,80,140,140]
    full = ([[60, 60, 140, 140]], [0.5], [0])
    # IoS: A-B = A-C = 2400/3600, A-D = 1600/3600 = 0.44, A-F = 1.
    # Greedy: A takes B, C, F (score order); D (0.44 with A) stays apart.
    _check("four slices greedy ios", [x.tolist() for x in combine_sliced(200, 200, sl, preds, full)],
           [[[60, 60, 140, 140], [80, 80, 140, 140]], [0.9, 0.6], [0, 0]])
    # NMM: A's list [B, C, F] (index order), then D through B (2400/3600).
    _check("four slices nmm ios", [x.tolist() for x in combine_sliced(200, 200, sl, preds, full, "nmm")],
           [[[60, 60, 140, 140]], [0.9], [0]])
    _check("four slices nms ios", [x.tolist() for x in combine_sliced(200, 200, sl, preds, full, "nms")],
           [[[60, 60, 120, 120], [80, 80, 140, 140]], [0.9, 0.6], [0, 0]])
    # model confidence below 0.1: SAHI switches to NMS / IOU. IoU A-B =
    # 2400/4800 = 0.5 >= 0.5, A-C 0.5, A-F 3600/6400 = 0.56, A-D
    # 1600/5600 = 0.29: A and D stay.
    _check("low confidence -> nms iou",
           [x.tolist() for x in combine_sliced(200, 200, sl, preds, full, model_confidence=0.05)],
           [[[60, 60, 120, 120], [80, 80, 140, 140]], [0.9, 0.6], [0, 0]])
    # one slice: the full-frame prediction is not added.
    one = slice_bboxes(200, 200, 200, 200)
    _check("one slice, no standard prediction",
           [x.tolist() for x in combine_sliced(200, 200, one, [([[0, 0, 10, 10]], [0.4], [0])], full)],
           [[[0, 0, 10, 10]], [0.4], [0]])


if __name__ == "__main__":
    _self_checks()
    if _failed:
        print("sahi_ref: %d checks passed, %d FAILED" % (_passed, len(_failed)))
        sys.exit(1)
    print("sahi_ref: %d checks passed" % _passed)

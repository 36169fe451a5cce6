"""Seeded NMS cases shared by the torchvision golden tests
(tests/golden/test_golden_nms.py, against Debian's torchvision on the CPU,
and tests/gpu/test_golden_cuda.py, against torchvision CUDA on the GPU
host), and the rule that turns torchvision's per-class nms into cudanms's
class-aware keep list."""

import numpy as np

IOUS = (0.3, 0.5, 0.7)
N_CLASSES = 80


def fill_case(rng, i, n, span):
    """Case i with n boxes over [0, span): boxes float32 [n, 4], scores
    float32 [n], classes int32 [n] and whether the scores tie heavily.

    Exact duplicates, integer coordinates (exact IoUs such as 0.5),
    zero-area boxes (they take part, torchvision-compatible) and few classes
    come and go with i."""
    size = span * float(rng.choice([0.02, 0.1, 0.3]))
    cx = rng.uniform(0, span, n)
    cy = rng.uniform(0, span, n)
    w = rng.uniform(0, size, n)
    h = rng.uniform(0, size, n)
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    if i % 4 == 1:
        boxes = np.round(boxes)
    boxes = boxes.astype(np.float32)

    scores = rng.random(n)
    ties = i % 2 == 0
    if ties:
        q = float(rng.choice([2, 5, 10, 100]))
        scores = np.round(scores * q) / q
    scores = scores.astype(np.float32)

    if n > 1 and i % 3 != 2:
        # exact duplicates (box, and for tie cases the score too)
        n_dup = int(rng.integers(1, max(2, n // 4)))
        src = rng.integers(0, n, n_dup)
        dst = rng.integers(0, n, n_dup)
        boxes[dst] = boxes[src]
        if ties:
            scores[dst] = scores[src]
    if i % 6 == 3 and n > 2:
        z = rng.integers(0, n, max(1, n // 10))
        boxes[z, 2] = boxes[z, 0]

    n_cls = N_CLASSES if i % 7 else int(rng.integers(1, 4))
    classes = rng.integers(0, n_cls, n).astype(np.int32)
    return boxes, scores, classes, ties


def merge_per_class(scores, classes, keep_of):
    """cudanms's class-aware keep list from torchvision's nms run per class
    (keep_of(idx) -> positions kept among idx), merged by (score desc, index
    asc). batched_nms is not used: its coordinate-offset trick changes the
    float arithmetic, and its final sort is not stable across classes."""
    keep = []
    for c in np.unique(classes):
        idx = np.nonzero(classes == c)[0]
        keep.extend(idx[keep_of(idx)].tolist())
    keep.sort(key=lambda j: (-float(scores[j]), j))
    return keep

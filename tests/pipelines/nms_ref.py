"""An independent NumPy reference of cudanms on a YOLOv8 tensor: decode,
letterbox undo, greedy class-aware NMS, ROI rounding. Written from the
semantics in docs/design.md, in float32 step by step like kernels/cnms_math.h."""
import math

import numpy as np

f32 = np.float32


def letterbox(model_w, model_h, frame_w, frame_h):
    gain = min(f32(model_w) / f32(frame_w), f32(model_h) / f32(frame_h))

    def pad(m, f):  # roundf of a positive value: half away from zero
        v = (f32(m) - f32(f) * gain) * f32(0.5) - f32(0.1)
        return f32(math.floor(float(v) + 0.5))
    return gain, pad(model_w, frame_w), pad(model_h, frame_h)


def reference(tensor, frame_w, frame_h, model_w=640, model_h=640,
              score_threshold=0.25, iou=0.45, max_detections=300):
    """Returns ([(x, y, w, h, label_id, confidence, x1, y1, x2, y2)], number
    of candidates) in kept order."""
    t = tensor.reshape(tensor.shape[-2], tensor.shape[-1]).astype(f32)
    cls = np.argmax(t[4:], axis=0)
    score = t[4:][cls, np.arange(t.shape[1])]
    gain, pad_x, pad_y = letterbox(model_w, model_h, frame_w, frame_h)

    def fmap(v, pad, limit):
        return np.clip((v - pad) / gain, f32(0), f32(limit))

    hw, hh = t[2] * f32(0.5), t[3] * f32(0.5)
    x1, x2 = fmap(t[0] - hw, pad_x, frame_w), fmap(t[0] + hw, pad_x, frame_w)
    y1, y2 = fmap(t[1] - hh, pad_y, frame_h), fmap(t[1] + hh, pad_y, frame_h)
    ok = (score > f32(score_threshold)) & np.isfinite(score) & \
        (x2 > x1) & (y2 > y1)
    cand = np.nonzero(ok)[0]
    cand = cand[np.lexsort((cand, -score[cand]))]
    area = (x2 - x1) * (y2 - y1)
    kept = []
    for j in cand:
        for i in kept:
            if cls[i] != cls[j]:
                continue
            iw = max(f32(0), min(x2[i], x2[j]) - max(x1[i], x1[j]))
            ih = max(f32(0), min(y2[i], y2[j]) - max(y1[i], y1[j]))
            inter = f32(iw * ih)
            den = f32(f32(area[i] + area[j]) - inter)
            if den != 0 and f32(inter / den) > f32(iou):
                break
        else:
            kept.append(j)
            if len(kept) == max_detections:
                break
    out = []
    for j in kept:
        x, y = int(math.floor(x1[j])), int(math.floor(y1[j]))
        out.append((x, y, int(math.ceil(x2[j])) - x,
                    int(math.ceil(y2[j])) - y, int(cls[j]),
                    float(score[j]), float(x1[j]), float(y1[j]),
                    float(x2[j]), float(y2[j])))
    return out, len(cand)

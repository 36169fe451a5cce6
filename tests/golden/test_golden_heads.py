#!/usr/bin/python3
"""Golden test of the heads: cudanms-tool decode --layout yolov8-pose
(keypoints) and --layout yolov8-seg (instance masks, --masks-out) against
a reference written for the test from the rules of docs/contracts.md
("Keypoints", "Segmentation masks"), in NumPy float32 (every operation
one IEEE rounding, as the library's; no FMA exists in NumPy's elementwise
arithmetic):

- decode: cx cy w h -> corners -> frame (v - pad) / gain, clipped;
  letterbox as ultralytics' scale_boxes: gain min (mh / fh, mw / fw) and
  pad round ((m - f gain) / 2 - 0.1) in Python floats, the gain then
  float32; or stretch; a candidate iff its score is above the threshold and
  its box is not empty; then greedy NMS per class (IoU > iou suppresses;
  scores are continuous, so the order is the score's), merged by score,
  max_detections;
- keypoints: x, y -> (v - pad) / gain, not clipped; the visibility score
  as it is (null for D = 2);
- masks: the pixels X in [ceil (x1), ceil (x2)) (likewise Y); logits of
  the whole prototype grid, sum over m ascending from 0; each pixel's
  centre back to the model, u = (X + 0.5) gain + pad, to the prototypes,
  v = u (P / model) - 0.5, clamped at 0, i0 = min (floor v, P - 1),
  i1 = min (i0 + 1, P - 1), w1 = v - i0, w0 = 1 - w1; the bilinear logit
  wy0 (wx0 l00 + wx1 l01) + wy1 (wx0 l10 + wx1 l11); set iff > 0.

Every kept record, every keypoint and every mask byte must be the
reference's exactly (a record's x2, y2 come back as x + w: to 1e-3).

usage: test_golden_heads.py CUDANMS_TOOL WORKDIR [--cases N] [--seed S]
    [--backend cpu|cuda]
"""

import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np

F = np.float32


def frame_map(mw, mh, fw, fh, letterbox):
    """(gain_x, gain_y, pad_x, pad_y), float32: ultralytics' scale_boxes,
    its gain and pad in Python floats (round: ties to even), the gain then
    float32 as a float32 tensor divided by it uses it."""
    if letterbox:
        gain = min(mh / fh, mw / fw)
        px = round((mw - fw * gain) / 2 - 0.1)
        py = round((mh - fh * gain) / 2 - 0.1)
        g = F(gain)
        return g, g, F(px), F(py)
    return F(F(mw) / F(fw)), F(F(mh) / F(fh)), F(0), F(0)


def decode_nms(t, n_cls, mp, fw, fh, thr, iou, max_det):
    """The kept anchors (score desc) with their class, score and box."""
    gx, gy, px, py = mp
    n = t.shape[2]
    sc = t[0, 4:4 + n_cls]
    cls = np.argmax(sc, axis=0)
    score = sc.max(axis=0)
    hw = t[0, 2] * F(0.5)
    hh = t[0, 3] * F(0.5)
    x1 = np.minimum(np.maximum((t[0, 0] - hw - px) / gx, F(0)), F(fw))
    y1 = np.minimum(np.maximum((t[0, 1] - hh - py) / gy, F(0)), F(fh))
    x2 = np.minimum(np.maximum((t[0, 0] + hw - px) / gx, F(0)), F(fw))
    y2 = np.minimum(np.maximum((t[0, 1] + hh - py) / gy, F(0)), F(fh))
    box = np.stack([x1, y1, x2, y2], 1).astype(F)
    ok = (score > F(thr)) & (x2 > x1) & (y2 > y1)
    idx = [int(a) for a in np.nonzero(ok)[0]]
    idx.sort(key=lambda a: (-float(score[a]), a))
    area = (box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])
    kept = []
    for a in idx:
        sup = False
        for k in kept:
            if cls[k] != cls[a]:
                continue
            iw = max(F(0), F(min(box[a, 2], box[k, 2]) - max(box[a, 0],
                                                              box[k, 0])))
            ih = max(F(0), F(min(box[a, 3], box[k, 3]) - max(box[a, 1],
                                                              box[k, 1])))
            inter = F(iw * ih)
            if inter / F(F(area[a] + area[k]) - inter) > F(iou):
                sup = True
                break
        if not sup:
            kept.append(a)
            if len(kept) == max_det:
                break
    return [(a, int(cls[a]), F(score[a]), box[a]) for a in kept]


def keypoints(t, a, k, d, mp):
    gx, gy, px, py = mp
    out = []
    for j in range(k):
        r = 5 + j * d
        x = F(F(t[0, r, a] - px) / gx)
        y = F(F(t[0, r + 1, a] - py) / gy)
        out.append((x, y, F(t[0, r + 2, a]) if d == 3 else None))
    return out


def axis(n_px, start, gain, pad, p, model):
    """Per pixel start .. start + n_px - 1: i0, i1, w0, w1."""
    x = np.arange(start, start + n_px, dtype=np.int64).astype(F)
    u = (x + F(0.5)) * F(gain) + F(pad)
    v = u * F(F(p) / F(model)) - F(0.5)
    v = np.where(v > F(0), v, F(0)).astype(F)
    i0 = np.where(v >= F(p - 1), p - 1, np.floor(v)).astype(np.int64)
    i1 = np.minimum(i0 + 1, p - 1)
    w1 = (v - i0.astype(F)).astype(F)
    return i0, i1, (F(1) - w1).astype(F), w1


def mask(t, a, row0, protos, box, mp, mw, mh):
    """The rectangle (x, y, w, h) and bytes of a kept record's mask."""
    gx, gy, px, py = mp
    m, hp, wp = protos.shape
    x0, y0 = int(math.ceil(box[0])), int(math.ceil(box[1]))
    w = max(0, int(math.ceil(box[2])) - x0)
    h = max(0, int(math.ceil(box[3])) - y0)
    if w == 0 or h == 0:
        return (x0, y0, w, h), np.zeros(0, np.uint8)
    lg = np.zeros((hp, wp), F)
    for j in range(m):
        lg = (lg + F(t[0, row0 + j, a]) * protos[j]).astype(F)
    xi0, xi1, wx0, wx1 = axis(w, x0, gx, px, wp, mw)
    yi0, yi1, wy0, wy1 = axis(h, y0, gy, py, hp, mh)
    l00 = lg[yi0][:, xi0]
    l01 = lg[yi0][:, xi1]
    l10 = lg[yi1][:, xi0]
    l11 = lg[yi1][:, xi1]
    top = wx0[None, :] * l00 + wx1[None, :] * l01
    bot = wx0[None, :] * l10 + wx1[None, :] * l11
    val = wy0[:, None] * top + wy1[:, None] * bot
    return (x0, y0, w, h), (val > F(0)).astype(np.uint8).ravel()


MODELS = [(640, 640), (320, 256), (512, 384)]
FRAMES = [(1280, 720), (640, 640), (333, 777), (100, 60), (640, 480)]
# sizes where ultralytics' pad (double, ties to even) differs from a
# float32 computation rounded half away from zero: every tenth case
# (letterboxed: i even)
PAD_EDGES = [((416, 416), (1280, 1024)), ((416, 416), (720, 576)),
             ((320, 320), (100, 64))]


def make_case(rng, i, pose):
    mw, mh = MODELS[i % len(MODELS)]
    fw, fh = FRAMES[(i // 3) % len(FRAMES)]
    if i % 10 == 8:
        (mw, mh), (fw, fh) = PAD_EDGES[(i // 10) % len(PAD_EDGES)]
    n = int(rng.integers(1, 600))
    g = int(rng.integers(1, 10))
    cen = rng.uniform(0, 1, (g, 2)) * (mw, mh)
    q = rng.integers(0, g, n)
    c = 1 if pose else int(rng.integers(1, 6))
    if pose:
        k = 17 if i % 4 == 0 else int(rng.integers(1, 8))
        d = 3 if i % 2 == 0 else 2
        rows = 5 + k * d
        m = hp = wp = 0
    else:
        k = d = 0
        m = 32 if i % 3 == 0 else int(rng.integers(1, 12))
        if i % 4 == 3:
            hp, wp = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        else:
            hp, wp = mh // 4, mw // 4
        rows = 4 + c + m
    t = np.zeros((1, rows, n), F)
    t[0, 0] = cen[q, 0] + rng.normal(0, 6, n)
    t[0, 1] = cen[q, 1] + rng.normal(0, 6, n)
    t[0, 2] = rng.uniform(4, mw / 3, n)
    t[0, 3] = rng.uniform(4, mh / 3, n)
    t[0, 4:4 + c] = rng.uniform(0, 1, (c, n)) ** 2
    if pose:
        for j in range(k):
            t[0, 5 + j * d] = rng.uniform(-30, mw + 30, n)
            t[0, 6 + j * d] = rng.uniform(-30, mh + 30, n)
            if d == 3:
                t[0, 7 + j * d] = rng.uniform(0, 1, n)
        protos = None
    else:
        t[0, 4 + c:] = rng.uniform(-2, 2, (m, n))
        protos = rng.uniform(-1, 1, (1, m, hp, wp)).astype(F)
        if i % 5 == 4:
            # quantised: logits of exactly 0 (not > 0) are common
            protos = (np.trunc(protos * 4) / 4).astype(F)
            t[0, 4 + c:] = np.trunc(t[0, 4 + c:] * 4) / 4
    ctl = {"model": (mw, mh), "frame": (fw, fh), "letterbox": i % 2 == 0,
           "thr": float(F(rng.choice([0.25, 0.4]))),
           "iou": float(F(rng.choice([0.45, 0.7]))),
           "max_det": int(rng.choice([300, 20])), "c": c, "k": k, "d": d,
           "m": m}
    return t, protos, ctl


def run_tool(tool, path, ppath, mpath, ctl, backend, pose):
    args = [tool, "decode", "--tensor", path,
            "--layout", "yolov8-pose" if pose else "yolov8-seg",
            "--model-size", "%dx%d" % ctl["model"],
            "--frame-size", "%dx%d" % ctl["frame"],
            "--score-threshold", repr(ctl["thr"]), "--iou", repr(ctl["iou"]),
            "--max-detections", str(ctl["max_det"]), "--backend", backend]
    if ctl["letterbox"]:
        args.append("--letterbox")
    if pose:
        args += ["--keypoint-dims", str(ctl["d"])]
    else:
        args += ["--protos", ppath, "--masks-out", mpath]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("cudanms-tool failed: %s\n%s" % (" ".join(args),
                                                          r.stderr))
    return [json.loads(line) for line in r.stdout.splitlines()], args


def compare(t, protos, ctl, got, mbytes, pose):
    """None when the tool's output is the reference's; else a reason."""
    mw, mh = ctl["model"]
    fw, fh = ctl["frame"]
    mp = frame_map(mw, mh, fw, fh, ctl["letterbox"])
    want = decode_nms(t, ctl["c"], mp, fw, fh, ctl["thr"], ctl["iou"],
                      ctl["max_det"])
    if len(got) != len(want):
        return "%d records, the reference %d" % (len(got), len(want))
    pix = 0
    for i, (g, (a, cls, score, box)) in enumerate(zip(got, want)):
        if (g["label_id"] != cls or F(g["confidence"]) != score
                or F(g["x"]) != box[0] or F(g["y"]) != box[1]
                or abs(float(F(g["x"]) + F(g["w"])) - float(box[2])) > 1e-3
                or abs(float(F(g["y"]) + F(g["h"])) - float(box[3])) > 1e-3):
            return "record %d: %s, the reference anchor %d class %d score " \
                "%r box %s" % (i, g, a, cls, float(score), list(box))
        if pose:
            wk = keypoints(t, a, ctl["k"], ctl["d"], mp)
            gk = g["keypoints"]
            if len(gk) != len(wk):
                return "record %d: %d keypoints" % (i, len(gk))
            for j, (gp, wp) in enumerate(zip(gk, wk)):
                if (F(gp[0]) != wp[0] or F(gp[1]) != wp[1]
                        or (wp[2] is None) != (gp[2] is None)
                        or (wp[2] is not None and F(gp[2]) != wp[2])):
                    return "record %d keypoint %d: %s, the reference %s" % (
                        i, j, gp, [float(v) if v is not None else None
                                   for v in wp])
            continue
        rect, bits = mask(t, a, 4 + ctl["c"], protos[0], box, mp, mw, mh)
        gm = g["mask"]
        if (gm["x"], gm["y"], gm["w"], gm["h"]) != rect:
            return "record %d: mask rectangle %s, the reference %s" % (
                i, gm, rect)
        if gm["offset"] != pix:
            return "record %d: mask offset %d, expected %d" % (
                i, gm["offset"], pix)
        mine = mbytes[pix:pix + len(bits)]
        pix += len(bits)
        if len(mine) != len(bits) or not np.array_equal(mine, bits):
            diff = int(np.count_nonzero(mine != bits)) \
                if len(mine) == len(bits) else -1
            return "record %d: %d of %d mask pixels differ" % (
                i, diff, len(bits))
        if gm["set"] != int(bits.sum()):
            return "record %d: %d pixels set, the reference %d" % (
                i, gm["set"], int(bits.sum()))
    if not pose and len(mbytes) != pix:
        return "masks-out holds %d bytes, %d expected" % (len(mbytes), pix)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("workdir")
    ap.add_argument("--cases", type=int, default=120)
    ap.add_argument("--seed", type=int, default=20261223)
    ap.add_argument("--backend", default="cpu")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    fails = 0
    for pose in (True, False):
        name = "pose" if pose else "seg"
        bad = kept = points = pixels = set_px = 0
        for i in range(a.cases):
            t, protos, ctl = make_case(rng, i, pose)
            half = i % 3 == 2
            path = os.path.join(a.workdir, "%s-%d.npy" % (name, i))
            ppath = os.path.join(a.workdir, "%s-%d-protos.npy" % (name, i))
            mpath = os.path.join(a.workdir, "%s-%d-masks.npy" % (name, i))
            if half:
                # float16 tensors: the reference reads the same halves
                t = t.astype(np.float16).astype(F)
                if protos is not None:
                    protos = protos.astype(np.float16).astype(F)
            np.save(path, t.astype(np.float16) if half else t)
            if protos is not None:
                np.save(ppath, protos.astype(np.float16) if half else protos)
            got, args = run_tool(a.tool, path, ppath, mpath, ctl, a.backend,
                                 pose)
            mbytes = None if pose else np.load(mpath)
            why = compare(t, protos, ctl, got, mbytes, pose)
            kept += len(got)
            if pose:
                points += sum(len(g["keypoints"]) for g in got)
            else:
                pixels += len(mbytes)
                set_px += int(mbytes.sum())
            if why is not None:
                bad += 1
                if bad <= 3:
                    print("%s case %d differs: %s\n  %s" % (
                        name, i, why, " ".join(args)))
            for p in (path, ppath, mpath):
                if os.path.exists(p):
                    os.unlink(p)
        if pose:
            print("golden-heads: pose: %d/%d cases identical to the "
                  "reference (%d records, %d keypoints); backend %s" % (
                      a.cases - bad, a.cases, kept, points, a.backend))
        else:
            print("golden-heads: seg: %d/%d cases identical to the "
                  "reference pixel for pixel (%d records, %d mask pixels, "
                  "%d set); backend %s" % (a.cases - bad, a.cases, kept,
                                            pixels, set_px, a.backend))
        # the seeded cases must exercise the rule: records kept, keypoints
        # or set mask pixels (an empty run would pass on nothing)
        if a.cases > 0 and (kept == 0 or (points == 0 if pose
                                          else set_px == 0)):
            print("golden-heads: %s: nothing kept or set in %d cases" % (
                name, a.cases))
            bad += 1
        fails += bad
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""How often cudanms's oriented NMS (cnms_detect, layout yolov8-obb,
through golden-obb-run) keeps what ultralytics' YOLOv8-OBB post-process
keeps, on seeded OBB frames (tests/bench/gen_data.py's obb_frame: 1024x1024
model, 21504 anchors, 15 classes, clusters of near-duplicate anchors).

usage: test_golden_obb_ultralytics.py GOLDEN_OBB_RUN WORKDIR [--frames N]
    [--seed S] [--backend cpu|cuda]

ultralytics (non_max_suppression with rotated=True), reimplemented here
from its written rule, not imported: candidates are the anchors whose best
class score is above the threshold, each with its first best class; in
class-aware mode each centre moves by class x 7680 px; the similarity is
probiou (1 - the Hellinger distance between the boxes' Gaussians: mean
the centre, covariance that of the uniform rectangle, R diag(w^2/12,
h^2/12) R^T, through the Bhattacharyya distance, with ultralytics' eps
placement) in float32; NMS is Fast-NMS: sort by score (torch.argsort,
descending), the similarity matrix's upper triangle, and a box is dropped
iff some box before it (kept or not) has similarity >= iou; the first
max_det are kept. cudanms is exact greedy NMS on the polygon IoU (> iou).
The two rules differ by design, so the agreement is measured and printed,
not asserted. What must hold, and is asserted, for every frame, mode and
threshold:
  - the candidates are the same (their number), and every kept record of
    cudanms carries its anchor's best score, first best class and box;
  - every decision of cudanms is the written rule's with the polygon IoU
    (shapely, float64; obb_common.check_decisions), at most 5 of them
    within REL_TOL of the threshold;
  - ultralytics' Fast-NMS keeps a subset of greedy NMS with its own
    similarity and order (checks the reimplementation);
  - a box ultralytics keeps and cudanms drops has a box cudanms kept
    before it, of its class unless agnostic, with polygon IoU (shapely,
    float64) above iou (within REL_TOL), whose probiou with it is below
    iou where its score is higher (the two similarities disagree there);
  - a box cudanms keeps and ultralytics drops has a box before it in
    ultralytics' order with probiou >= iou that cudanms either dropped
    (Fast-NMS: a suppressed box still suppresses) or found with polygon
    IoU at most iou (within REL_TOL) (the similarities disagree).
Exit 77 without shapely or torch.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "bench"))
import obb_common as oc  # noqa: E402

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print("golden-obb-ultralytics: skipped, torch is not importable: %s" % e)
    sys.exit(77)
if oc.Polygon is None:
    print("golden-obb-ultralytics: skipped, shapely is not importable "
          "(apt-get install python3-shapely)")
    sys.exit(77)
import gen_data  # noqa: E402

SCORE = 0.25
IOUS = (0.45, 0.7)
MAX_DET = 300
MAX_WH = 7680.0
EPS = 1e-7
MODEL = gen_data.OBB_MODEL

failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 20:
        print("golden-obb-ultralytics: FAIL " + msg)


def gauss(b):
    """Covariance (var_x, var_y, cov_xy) of each box's uniform rectangle,
    in ultralytics' operation order (float32)."""
    vw, vh = b[:, 2].pow(2) / 12, b[:, 3].pow(2) / 12
    cs, sn = b[:, 4].cos(), b[:, 4].sin()
    return (vw * cs.pow(2) + vh * sn.pow(2), vw * sn.pow(2) + vh * cs.pow(2),
            (vw - vh) * cs * sn)


def probiou(b):
    """[n, n] probiou of boxes b [n, 5] (cx cy w h angle) with each other."""
    a1, b1, c1 = (v[:, None] for v in gauss(b))
    a2, b2, c2 = (v[None, :] for v in gauss(b))
    x1, y1 = b[:, 0, None], b[:, 1, None]
    x2, y2 = b[None, :, 0], b[None, :, 1]
    sa, sb, sc = a1 + a2, b1 + b2, c1 + c2
    det = sa * sb - sc.pow(2)
    t1 = ((sa * (y1 - y2).pow(2) + sb * (x1 - x2).pow(2)) / (det + EPS)) \
        * 0.25
    t2 = ((sc * (x2 - x1) * (y1 - y2)) / (det + EPS)) * 0.5
    d1 = (a1 * b1 - c1.pow(2)).clamp(0)
    d2 = (a2 * b2 - c2.pow(2)).clamp(0)
    t3 = (det / (4 * (d1 * d2).sqrt() + EPS) + EPS).log() * 0.5
    bd = (t1 + t2 + t3).clamp(EPS, 100.0)
    return 1 - (1.0 - (-bd).exp() + EPS).sqrt()


def ultralytics(t, iou, agnostic):
    """ultralytics' rule on tensor t [1, 4+C+1, N]: (kept anchors in kept
    order, greedy-with-probiou anchors, candidate anchors in its order, the
    similarity of each pair of candidates by anchor)."""
    x = torch.from_numpy(t[0]).T                # [N, 4+C+1]
    c = t.shape[1] - 5
    conf, cls = x[:, 4:4 + c].max(1)
    idx = torch.nonzero(conf > SCORE).squeeze(1)
    conf, cls, x = conf[idx], cls[idx], x[idx]
    off = cls.to(torch.float32)[:, None] * (0.0 if agnostic else MAX_WH)
    boxes = torch.cat([x[:, :2] + off, x[:, 2:4], x[:, -1:]], 1)
    order = torch.argsort(conf, descending=True)
    sim = probiou(boxes[order])
    upper = sim.triu(1)
    fast = torch.nonzero((upper >= iou).sum(0) <= 0).squeeze(1)
    kept = idx[order[fast]][:MAX_DET].tolist()
    # greedy NMS with the same similarity and order
    n = len(order)
    alive = torch.ones(n, dtype=torch.bool)
    greedy = []
    for k in range(n):
        if alive[k]:
            greedy.append(k)
            alive &= ~(upper[k] >= iou)
    anchors = idx[order].tolist()
    pos = {a: k for k, a in enumerate(anchors)}
    return kept, [anchors[k] for k in greedy][:MAX_DET], anchors, pos, sim


def run_frame(run, t, iou, agnostic, label, stats):
    iou32 = float(np.float32(iou))
    dets, cands = run.detect(t, SCORE, iou, agnostic, MAX_DET, 30000,
                             (MODEL, MODEL), (MODEL, MODEL), True)
    kept_u, greedy_p, u_order, u_pos, sim = ultralytics(t, iou32, agnostic)
    x = t[0].T
    c = t.shape[1] - 5
    if cands != len(u_order):
        fail("%s: cudanms has %d candidates, ultralytics %d" % (
            label, cands, len(u_order)))
    kept_c = [int(a) for a in dets[:, 7]]
    for d in dets:
        a = int(d[7])
        sc = x[a, 4:4 + c]
        want = np.array([sc.max(), x[a, 0], x[a, 1], x[a, 2], x[a, 3],
                         x[a, 4 + c], int(np.argmax(sc))], np.float32)
        if want.tobytes() != d[:7].astype(np.float32).tobytes():
            fail("%s: anchor %d: record %s, the tensor says %s" % (
                label, a, d.tolist(), want.tolist()))
            break
    if not set(kept_u) <= set(greedy_p):
        fail("%s: Fast-NMS keeps %d boxes greedy NMS drops" % (
            label, len(set(kept_u) - set(greedy_p))))

    # the polygon IoU of anchors (a, b), by shapely
    bx = oc.Boxes(x[:, [0, 1, 2, 3, 4 + c]].copy())
    cls = np.argmax(x[:, 4:4 + c], 1)
    scores = x[:, 4:4 + c].max(1)
    c_pos = {a: k for k, a in enumerate(kept_c)}
    tol = oc.REL_TOL * iou32

    def s(a, b):
        return float(sim[u_pos[a], u_pos[b]])

    # cudanms's own decisions, each by the written rule (polygon IoU)
    cand_scores = np.where(scores > np.float32(SCORE), scores, np.nan)
    ties, near, wrong, _ = oc.check_decisions(
        bx, cand_scores, cls, iou32, agnostic, MAX_DET, kept_c)
    if wrong:
        fail("%s: %d decisions of cudanms differ from the polygon-IoU rule, "
             "first: %s" % (label, len(wrong), wrong[0]))
    stats.setdefault("near", []).extend((label, j, v) for j, v in
                                        ties + near)

    only_u = [b for b in kept_u if b not in c_pos]
    for b in only_u:
        ok = False
        for a in kept_c:
            if (scores[a], -a) <= (scores[b], -b):
                break
            if not agnostic and cls[a] != cls[b]:
                continue
            if bx.iou(a, b) > iou32 - tol and (
                    scores[a] == scores[b] or s(a, b) < iou32):
                ok = True
                break
        if not ok:
            fail("%s: ultralytics keeps anchor %d, cudanms drops it, and no"
                 " box cudanms kept before it overlaps it by more than %g"
                 % (label, b, iou32))
    kept_u_set = set(kept_u)
    only_c = [b for b in kept_c if b not in kept_u_set]
    chain = similar = 0
    for b in only_c:
        if b not in u_pos:
            fail("%s: cudanms keeps anchor %d, not an ultralytics "
                 "candidate" % (label, b))
            continue
        if u_pos[b] >= MAX_DET and len(kept_u) == MAX_DET:
            continue
        why = None
        for a in u_order[:u_pos[b]]:
            if s(a, b) < iou32:
                continue
            if a not in c_pos:
                why = "chain"
                break
            if bx.iou(a, b) <= iou32 + tol:
                why = "similarity"
        if why is None:
            fail("%s: ultralytics drops anchor %d, cudanms keeps it, and no "
                 "box before it explains why" % (label, b))
        chain += why == "chain"
        similar += why == "similarity"
    st = stats.setdefault((agnostic, iou), dict(
        frames=0, same=0, k_c=0, k_u=0, common=0, union=0, only_u=0,
        only_c=0, chain=0, similar=0, sim_effect=0, fast_effect=0))
    common = len(set(kept_c) & kept_u_set)
    st["frames"] += 1
    st["same"] += set(kept_c) == kept_u_set
    st["k_c"] += len(kept_c)
    st["k_u"] += len(kept_u)
    st["common"] += common
    st["union"] += len(set(kept_c) | kept_u_set)
    st["only_u"] += len(only_u)
    st["only_c"] += len(only_c)
    st["chain"] += chain
    st["similar"] += similar
    st["sim_effect"] += len(set(kept_c) ^ set(greedy_p))
    st["fast_effect"] += len(set(greedy_p) - kept_u_set)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("workdir")
    ap.add_argument("--frames", type=int, default=12)
    ap.add_argument("--seed", type=int, default=20261204)
    ap.add_argument("--backend", default="cpu")
    a = ap.parse_args()
    torch.set_num_threads(1)
    run = oc.Runner(a.tool, a.workdir, a.backend)
    stats = {}
    for f in range(a.frames):
        # frame 0 is the benchmark's frame
        seed = gen_data.SEED_OBB if f == 0 else a.seed + f
        t = gen_data.obb_frame(np.random.default_rng(seed))
        for iou in IOUS:
            for agnostic in (False, True):
                run_frame(run, t, iou, agnostic, "frame %d (seed %d) iou %g "
                          "%s" % (f, seed, iou, "agnostic" if agnostic
                                  else "class-aware"), stats)
    print("golden-obb-ultralytics: %d frames of %d anchors, %d classes, score"
          " > %g, max_det %d; cudanms (polygon IoU, greedy) vs ultralytics "
          "(probiou, Fast-NMS):" % (a.frames, 21504, gen_data.OBB_CLASSES,
                                    SCORE, MAX_DET))
    near = stats.pop("near", [])
    print("golden-obb-ultralytics: cudanms's decisions by the polygon-IoU "
          "rule: %d within %g of the threshold%s" % (
              len(near), oc.REL_TOL, (", first: %s" % (near[0],))
              if near else ""))
    if len(near) > 5:
        fail("%d decisions within %g of the threshold" % (len(near),
                                                          oc.REL_TOL))
    for (agnostic, iou), st in sorted(stats.items()):
        print("  iou %.2f %-11s: %2d/%d frames identical; kept %d (cudanms) "
              "%d (ultralytics), %d in common = %.1f%% of the union; only "
              "ultralytics %d, only cudanms %d (its suppressor in ultralytics "
              "dropped by cudanms %d, kept with polygon IoU <= iou %d); "
              "greedy NMS with probiou differs from cudanms by %d, Fast-NMS "
              "drops %d more than it" % (
                  iou, "agnostic" if agnostic else "class-aware",
                  st["same"], st["frames"], st["k_c"], st["k_u"],
                  st["common"], 100.0 * st["common"] / max(1, st["union"]),
                  st["only_u"], st["only_c"], st["chain"], st["similar"],
                  st["sim_effect"], st["fast_effect"]))
    if failures:
        print("golden-obb-ultralytics: %d failures" % len(failures))
        return 1
    print("golden-obb-ultralytics: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""torchvision / PyTorch (and OpenCV) anchors for the cudanms benchmarks.

usage: bench_torch.py DATA_DIR OUT_JSON [--device cuda|cpu] [--iters N]
                      [--warmup N] [--budget S] [--min-time S]
                      [--cudanms-dir DIR] [--opencv]
       bench_torch.py DATA_DIR OUT_JSON --batch B,B,.. [--batch-layouts L,..]
                      [--device ..] [--iters N] [--warmup N] [--budget S]
       bench_torch.py DATA_DIR OUT_JSON --tiles [--device ..] [--iters N]
                      [--warmup N] [--budget S] [--min-time S]
                      [--cudanms-dir DIR]

Reads the inputs of gen_data.py and measures, median and min of the timed
iterations after a warm-up:
  - nms: torchvision.ops.nms (class-agnostic) and batched_nms (80 classes),
    IoU 0.5, on the first N boxes, N = 256 .. 32768, inputs already on the
    device;
  - frame: a PyTorch post-process of yolov8.npy / yolov5.npy with the tensor
    already on the device: transpose (yolov8), best class (max), score
    (yolov5: objectness x best class), threshold 0.25 (strict), xywh ->
    xyxy, clip to the 640x640 frame (model == frame: the letterbox map is
    the identity), batched_nms IoU 0.45, top 300, one [K, 7] result
    (x1 y1 x2 y2 score class anchor) to the host;
  - nms_rotated: oriented NMS as ultralytics does it (its OBB
    post-process's NMS, written for the bench): the probiou matrix of the
    boxes (nms_obb_boxes.npy, the same N, scores and classes; class-aware
    by moving each centre by class x 7680 px), Fast-NMS on its upper
    triangle (a box is dropped iff a box before it in score order has
    probiou >= 0.5, kept or not); an N x N float32 matrix and its
    temporaries, so the CPU run stops at N = OBB_CPU_MAX_N (the records
    above say NOT MEASURED) and a CUDA case that runs out of memory says
    so;
  - frame yolov8_obb: the PyTorch post-process of yolov8_obb.npy
    [1, 20, 21504] as ultralytics writes it (best class by max, score >
    0.25, class offset 7680, probiou matrix, Fast-NMS IoU 0.45, top 300),
    one [K, 8] result (cx cy w h score class anchor angle) to the host.
    Its kept set differs from cudanms's by design (probiou and Fast-NMS
    against exact greedy NMS on the polygon IoU);
  - frame laneatt: LaneATT's lane post-process of laneatt.npy [1, 1000, 77]
    (S = 72) written for the bench, vectorised in torch on the device:
    softmax of the two logits (in float64, rounded once to float32, as
    the rule's score), candidates score > 0.5 whose start row is valid,
    sorted (score desc, index asc: a stable sort), LaneATT's devIoU rule
    as a [K, K, S] tensor (start / end rows with its float and double
    steps, |x_a - x_b| over the shared rows, summed by torch's reduction,
    not in row order; suppressed iff sum < 50 x rows), the [K, K] matrix to
    the host and the greedy keep there (as LaneATT resolves its NMS
    kernel's mask), top_k 4; one [K, 2] (score, anchor) result. Compared
    with cudanms's kept anchors (dets_*_laneatt.npy);
  - frame yolov8_seg: the PyTorch post-process of yolov8_seg.npy
    [1, 116, 8400] with yolov8_seg_protos.npy [1, 32, 160, 160] as
    ultralytics' process_mask does it (written for the bench): the frame
    decode and batched_nms above (80 classes), top 300; the kept anchors'
    32 coefficients times the prototypes (one matmul), each mask's logits
    cropped to its box at 160x160 (the box / 4, crop_mask's r >= x1 and
    r < x2), upsampled to 640x640 (F.interpolate, bilinear,
    align_corners=False), > 0; one uint8 result to the host: the [K, 7]
    records and the [K, 640, 640] masks ("torch-seg-post"), or the records
    only with the masks computed and left on the device
    ("torch-seg-post-masks-on-device"). Compared with cudanms's records
    (dets_*_yolov8_seg.npy) and masks (masks_*_yolov8_seg.npy): the kept
    anchors, and the mean IoU and differing pixels of the masks of the
    anchors both keep (ultralytics crops before upsampling, cudanms after:
    they differ along the box edges by design);
  - with --opencv (CPU): cv2.dnn.NMSBoxes on the same N boxes (score
    threshold 0, the least it takes; xywh float64 rects made before
    timing) and the same frame decode in numpy before NMSBoxes; class-aware
    by the usual class-offset trick. Without OpenCV (cv2 not importable)
    the torchvision rows are still measured and each OpenCV record says
    why it was not ("error"), which report.py prints as NOT MEASURED.
With --batch (bench-batch's anchor; nothing else runs): ultralytics'
batched post-process, written for the bench (ultralytics is not
imported), of B copies of each --batch-layouts frame (default yolov8,
yolov8_obb, yolov8_pose, yolov8_seg) as one [B, ...] tensor on the device
(the copies made there); its non_max_suppression as its code runs it:
the anchors whose best class is above 0.25 (for the whole batch), xywh to
xyxy (not for OBB), then image by image its best class, its top 30000 by
score, NMS on boxes moved by class x 7680, top 300, the rows after the
classes (nm) carried along; the scaling to the frame is the identity
(model == frame) and left out, its clip with it. One result to the host
per batch, the image index in each record:
  - yolov8 [B, 84, 8400] ("ultralytics-nms"): torchvision's nms; [K, 7]
    x1 y1 x2 y2 score class image;
  - yolov8_obb [B, 20, 21504] ("ultralytics-nms-obb"; rotated, 15
    classes, the angle carried): the single-frame OBB anchor's probiou
    matrix and Fast-NMS (obb_nms) per image, IoU 0.45; [K, 8] cx cy w h
    score class angle image (regularize_rboxes left out, as there);
  - yolov8_pose [B, 56, 8400] ("ultralytics-nms-pose"; 1 class, the
    17 x 3 keypoints carried): torchvision's nms, each image's kept
    keypoints as [k, 17, 3] (the pose predictor's view); [K, 58] x1 y1 x2
    y2 score class image, then the 51 keypoint values;
  - yolov8_seg [B, 116, 8400] with [B, 32, 160, 160] prototypes
    ("ultralytics-nms-seg"; 80 classes, the 32 coefficients carried):
    torchvision's nms, then per image process_mask (upsample=True) as
    torch_seg_post does it (coefficients times that image's prototypes,
    crop at 160x160, bilinear upsample to 640x640, > 0); one uint8 result
    as "torch-seg-post"'s: the [K, 7] records (x1 y1 x2 y2 score class
    image) and the [K, 640, 640] masks. B = 128 makes about 0.9 GB of
    inputs and 2 GB of masks on the device; on the CPU it runs up to
    B = SEG_CPU_MAX_B (the records above say NOT MEASURED).
Each record: bench "batch", impl + "-" + device, layout, batch, dets (all
images'), the times of the whole batch and per frame (*_frame_us); one
line each, "torch batch B=%d: ..." for yolov8 (as before) and "torch
batch LAYOUT B=%d: ..." for the others.

With --tiles (bench-tiles' anchors; nothing else runs): tiles.npy [33,
84, 8400], a 3840x2160 frame's 32 slices of 640x640 (SAHI's grid, overlap
0.2) and the whole frame last (params.json "tiles"), on the device:
  - "ultralytics-nms": the detector's post-process of the 33 slices as
    ultralytics runs it (its batched non_max_suppression as --batch runs
    it for yolov8, score 0.25, IoU 0.45, top 300, NMS on the model's
    boxes moved by class x 7680), then each image's scale_boxes and
    clip_boxes into its view (a slice 1:1; the whole frame: the pad of
    140 rows subtracted, divided by the gain 1/6, a Python float: on
    CUDA torch multiplies by its float32 reciprocal instead, 1 ulp from
    the division on some boxes), one [K, 7] result to the host;
  - "sahi-merge-numpy": SAHI's merge as the NumPy reference writes it
    (tests/scripts/sahi_ref.py: greedy NMM, IoS 0.5, each class alone,
    SAHI's defaults) of the records SAHI's assembly makes of that result
    (slice_to_frame: clipped, degenerate boxes dropped, shifted in
    float64, the whole frame last), on the host: the merge alone;
  - "ultralytics-sahi": the two end to end (the post-process, its result
    to the host, the assembly and merge by sahi_ref.combine_sliced), wall
    time;
  - "torchvision-batched_nms-merge": the same records merged by
    torchvision's batched_nms at IoU 0.5, each class alone (the usual
    fast substitute, not SAHI's rule: its detections differ by design),
    the records on the device;
  - "ultralytics-batched_nms": that end to end on the device (the
    post-process, SAHI's clip and drop, the shift in float32,
    batched_nms), one result to the host.
The SAHI-rule result is compared with cudanms's (dets_*_tiles.npy in
--cudanms-dir, by default DATA_DIR, where bench-tiles writes it): the
keeping records' symmetric difference ("mismatch"), the order, and the
keepers whose float32 score, box or class differ ("value_diffs"); the
slices' records with records_*_tiles.npy (the post-process's record).
Identical is expected; on CUDA, the same comparison of the post-process
run on the CPU copy (untimed) is added ("host_post_*"), where torch
divides as cudanms's contract does. Records "bench": "tiles", one line
each, and a line "torch tiles ..." with the figures.

Times: wall = perf_counter from before the call to the result on the host.
On CUDA, GPU time = CUDA events around the same work, the result's
download to pinned memory included (torchvision's nms itself synchronises
with the host to resolve the greedy order on the CPU).

With --cudanms-dir (where bench-nms / bench-frame --save-dir
wrote), each result is compared with cudanms's (the CUDA backend's when
present, else the CPU backend's): the records carry `mismatch` (size of the
symmetric difference of the kept index / anchor sets), `same_order` and, for
frames, `value_diffs` (kept in both but with another score, box or class).
Mismatches are reported, never hidden: batched_nms's coordinate-offset
trick (used below 5000 boxes on CUDA, 1000 on the CPU) rounds boxes
differently, and sort ties may order differently.

Time-bounded: a case stops after --budget seconds once 10 iterations ran,
and its warm-up after half that once one warm-up ran; with --min-time it
goes on past --iters until that much time is timed. The JSON records how
many ran. Use the host's own python3 (torch 2.x), not
the GStreamer environment of .gpuhost/activate.sh.
"""

import argparse
import datetime
import json
import os
import platform
import socket
import subprocess
import sys
import time

import numpy as np

try:
    import torch
    import torchvision
    from torchvision.ops import batched_nms, nms
except ImportError as e:  # depends on the machine
    sys.exit("bench_torch: torch/torchvision not importable: %s" % e)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
import sahi_ref  # noqa: E402  (SAHI's rules in NumPy: the tiles' anchor)

try:
    import cv2
    CV2_ERROR = None
except ImportError as e:  # optional: its rows then say why
    cv2 = None
    CV2_ERROR = "cv2 not importable: %s" % e

SIZES = (256, 1024, 2048, 4096, 8192, 16384, 32768)
MAX_SAMPLES = 200000
IOU_NMS = 0.5
SCORE = 0.25
IOU_FRAME = 0.45
TOP = 300
FRAME = 640.0
OBB_MAX_WH = 7680.0
OBB_EPS = 1e-7
OBB_CPU_MAX_N = 4096
LANE_SCORE = 0.5
LANE_DISTANCE = 50.0
LANE_TOP_K = 4
LANE_MAX_LENGTH = 2.0 ** 20
SEG_CLASSES = 80
POSE_KPT_SHAPE = (17, 3)
SEG_CPU_MAX_B = 8
# SAHI's postprocess defaults (get_sliced_prediction): greedy NMM, IoS,
# 0.5, each class alone
TILES_MERGE = ("greedy-nmm", "ios", 0.5, False)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def driver_version():
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else None
    except (OSError, IndexError, subprocess.SubprocessError):
        return None


def env_record(dev):
    rec = {"bench": "env", "impl": "torch", "device": dev.type,
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
               timespec="seconds"),
           "host": socket.gethostname(), "cpu": cpu_model(),
           "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
           "python": platform.python_version(), "torch": torch.__version__,
           "torchvision": torchvision.__version__, "numpy": np.__version__}
    if dev.type == "cuda":
        rec["gpu"] = torch.cuda.get_device_name(dev)
        rec["cuda"] = torch.version.cuda
        rec["driver"] = driver_version()
    return rec


class Timer:
    """Runs fn() (which returns a device tensor) and brings it to the host."""

    def __init__(self, dev, args):
        self.dev, self.args = dev, args
        self.cuda = dev.type == "cuda"
        if self.cuda:
            self.pinned = torch.empty(1 << 20, dtype=torch.float32,
                                      pin_memory=True)
            self.ev = (torch.cuda.Event(enable_timing=True),
                       torch.cuda.Event(enable_timing=True))

    def once(self, fn):
        if not self.cuda:
            t0 = time.perf_counter()
            out = fn().numpy()
            return (time.perf_counter() - t0) * 1e6, None, out
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        self.ev[0].record()
        res = fn()
        if res.dtype == torch.uint8:
            if getattr(self, "pinned_u8", None) is None \
                    or self.pinned_u8.numel() < res.numel():
                self.pinned_u8 = torch.empty(max(res.numel(), 64 << 20),
                                             dtype=torch.uint8,
                                             pin_memory=True)
            host = self.pinned_u8[:res.numel()].view(res.shape)
        else:
            if self.pinned.numel() < res.numel() * 2:  # a large batch
                self.pinned = torch.empty(res.numel() * 2,
                                          dtype=torch.float32,
                                          pin_memory=True)
            host = self.pinned[:res.numel()].view(res.shape) if \
                res.dtype == torch.float32 else \
                self.pinned[:res.numel() * 2].view(torch.int64)[
                    :res.numel()].view(res.shape)
        host.copy_(res, non_blocking=True)
        self.ev[1].record()
        self.ev[1].synchronize()
        wall = (time.perf_counter() - t0) * 1e6
        return wall, self.ev[0].elapsed_time(self.ev[1]) * 1e3, host.numpy().copy()

    def run(self, fn):
        a = self.args
        start = time.perf_counter()
        for _ in range(a.warmup):
            self.once(fn)
            if time.perf_counter() - start > a.budget / 2:
                break
        walls, gpus, start = [], [], time.perf_counter()
        out = None
        while len(walls) < MAX_SAMPLES:
            w, g, out = self.once(fn)
            walls.append(w)
            if g is not None:
                gpus.append(g)
            elapsed = time.perf_counter() - start
            if len(walls) >= 10 and elapsed > a.budget:
                break
            if len(walls) >= a.iters and elapsed >= a.min_time:
                break
        rec = {"iters": len(walls),
               "wall_med_us": float(np.median(walls)),
               "wall_min_us": float(np.min(walls)),
               "gpu_med_us": float(np.median(gpus)) if gpus else None,
               "gpu_min_us": float(np.min(gpus)) if gpus else None}
        return rec, out


def reference(cdir, stem):
    """cudanms's result for stem (CUDA first), as (impl, array) or None."""
    if not cdir:
        return None
    for b in ("cuda", "cpu"):
        p = os.path.join(cdir, stem % b)
        if os.path.exists(p):
            return "cudanms-" + b, np.load(p)
    return None


def record_error(records, rec, error):
    """Appends rec to records with error as its "error" and reports it (NOT
    MEASURED)."""
    rec["error"] = error
    records.append(rec)
    report(rec)


def oom_error(dev, e):
    """The error of a case that ran out of memory: e's first line, at most
    120 characters. A CUDA device's cached memory is freed for the next
    case."""
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return str(e).split("\n")[0][:120]


def compare_lists(ours, ref):
    ours, ref = [int(x) for x in ours], [int(x) for x in ref]
    return {"mismatch": len(set(ours) ^ set(ref)),
            "same_order": ours == ref}


def bench_nms(data, dev, args, timer, records):
    boxes = torch.from_numpy(np.load(os.path.join(data, "nms_boxes.npy")))
    scores = torch.from_numpy(np.load(os.path.join(data, "nms_scores.npy")))
    classes = torch.from_numpy(np.load(os.path.join(data, "nms_classes.npy")))
    boxes, scores = boxes.to(dev), scores.to(dev)
    classes = classes.to(dev).long()
    for n in SIZES:
        for mode in ("agnostic", "classes"):
            b, s, c = boxes[:n].contiguous(), scores[:n].contiguous(), \
                classes[:n].contiguous()
            if mode == "agnostic":
                impl = "torchvision-nms"
                fn = lambda: nms(b, s, IOU_NMS)  # noqa: E731
            else:
                impl = "torchvision-batched_nms"
                fn = lambda: batched_nms(b, s, c, IOU_NMS)  # noqa: E731
            rec, keep = timer.run(fn)
            rec.update({"bench": "nms", "impl": impl + "-" + dev.type,
                        "mode": mode, "n": n, "iou": IOU_NMS,
                        "kept": int(keep.size)})
            ref = reference(args.cudanms_dir,
                            "keep_%%s_%s_%d.npy" % (mode, n))
            if ref is not None:
                rec["vs"] = ref[0]
                rec.update(compare_lists(keep.ravel(), ref[1].ravel()))
            records.append(rec)
            report(rec)
            if args.opencv:
                rec = opencv_nms(b.numpy(), s.numpy(), c.numpy(), mode, args)
                rec.update({"bench": "nms", "impl": "opencv-nmsboxes-cpu",
                            "mode": mode, "n": n, "iou": IOU_NMS})
                if ref is not None and "error" not in rec:
                    rec["vs"] = ref[0]
                    rec.update(compare_lists(rec.pop("keep"), ref[1].ravel()))
                rec.pop("keep", None)
                records.append(rec)
                report(rec)


def probiou(b):
    """[n, n] probiou (1 - the Hellinger distance of the boxes' Gaussians,
    ultralytics' eps placement) of boxes b [n, 5] cx cy w h angle."""
    vw, vh = b[:, 2].pow(2) / 12, b[:, 3].pow(2) / 12
    cs, sn = b[:, 4].cos(), b[:, 4].sin()
    ga = vw * cs.pow(2) + vh * sn.pow(2)
    gb = vw * sn.pow(2) + vh * cs.pow(2)
    gc = (vw - vh) * cs * sn
    a1, b1, c1 = ga[:, None], gb[:, None], gc[:, None]
    a2, b2, c2 = ga[None], gb[None], gc[None]
    x1, y1 = b[:, 0, None], b[:, 1, None]
    x2, y2 = b[None, :, 0], b[None, :, 1]
    sa, sb, sc = a1 + a2, b1 + b2, c1 + c2
    det = sa * sb - sc.pow(2)
    t1 = ((sa * (y1 - y2).pow(2) + sb * (x1 - x2).pow(2))
          / (det + OBB_EPS)) * 0.25
    t2 = ((sc * (x2 - x1) * (y1 - y2)) / (det + OBB_EPS)) * 0.5
    d12 = (a1 * b1 - c1.pow(2)).clamp(0) * (a2 * b2 - c2.pow(2)).clamp(0)
    t3 = (det / (4 * d12.sqrt() + OBB_EPS) + OBB_EPS).log() * 0.5
    bd = (t1 + t2 + t3).clamp(OBB_EPS, 100.0)
    return 1 - (1.0 - (-bd).exp() + OBB_EPS).sqrt()


def fast_nms_obb(boxes, scores, iou):
    """Fast-NMS with probiou: kept indices in score order."""
    order = torch.argsort(scores, descending=True)
    sim = probiou(boxes[order]).triu_(diagonal=1)
    return order[torch.nonzero((sim >= iou).sum(0) <= 0).squeeze(1)]


def obb_nms(b, s, c, iou, class_aware):
    if class_aware:
        b = torch.cat([b[:, :2] + c[:, None].to(b.dtype) * OBB_MAX_WH,
                       b[:, 2:]], 1)
    return fast_nms_obb(b, s, iou)


def bench_nms_rotated(data, dev, args, timer, records):
    path = os.path.join(data, "nms_obb_boxes.npy")
    if not os.path.exists(path):
        return
    boxes = torch.from_numpy(np.load(path)).to(dev)
    scores = torch.from_numpy(np.load(os.path.join(data, "nms_scores.npy")))
    classes = torch.from_numpy(np.load(os.path.join(data,
                                                    "nms_classes.npy")))
    scores, classes = scores.to(dev), classes.to(dev).long()
    for n in SIZES:
        for mode in ("agnostic", "classes"):
            rec = {"bench": "nms_rotated",
                   "impl": "torch-probiou-fastnms-" + dev.type, "mode": mode,
                   "n": n, "iou": IOU_NMS}
            if dev.type == "cpu" and n > OBB_CPU_MAX_N:
                record_error(records, rec, "not run on the CPU above N=%d "
                             "(an N x N probiou matrix)" % OBB_CPU_MAX_N)
                continue
            b, s, c = boxes[:n].contiguous(), scores[:n].contiguous(), \
                classes[:n].contiguous()
            try:
                r, keep = timer.run(lambda: obb_nms(
                    b, s, c, IOU_NMS, mode == "classes"))
            except RuntimeError as e:  # out of memory
                record_error(records, rec, oom_error(dev, e))
                continue
            rec.update(r)
            rec["kept"] = int(keep.size)
            ref = reference(args.cudanms_dir,
                            "keep_rot_%%s_%s_%d.npy" % (mode, n))
            if ref is not None:
                rec["vs"] = ref[0]
                rec.update(compare_lists(keep.ravel(), ref[1].ravel()))
            records.append(rec)
            report(rec)


def torch_obb_post(t):
    """ultralytics' YOLOv8-OBB post-process of t [1, 4+C+1, N]: [K, 8] cx
    cy w h score class anchor angle."""
    x = t[0].T
    c = x.shape[1] - 5
    conf, cls = x[:, 4:4 + c].max(1)
    idx = (conf > SCORE).nonzero().squeeze(1)
    x, conf, cls = x[idx], conf[idx], cls[idx]
    boxes = torch.cat([x[:, :4], x[:, -1:]], 1)
    keep = obb_nms(boxes, conf, cls, IOU_FRAME, True)[:TOP]
    return torch.cat([x[keep, :4], conf[keep, None],
                      cls[keep, None].to(x.dtype),
                      idx[keep, None].to(x.dtype), x[keep, -1:]], 1)


def compare_dets_obb(ours, ref):
    """ours: [K,8] cx cy w h score class anchor angle; ref (cudanms): score
    cx cy w h class anchor angle."""
    res = compare_lists(ours[:, 6], ref[:, 6])
    mine = {int(r[6]): (r[4], r[0], r[1], r[2], r[3], r[5], r[7])
            for r in ours}
    theirs = {int(r[6]): (r[0], r[1], r[2], r[3], r[4], r[5], r[7])
              for r in ref}
    res["value_diffs"] = sum(1 for a in set(mine) & set(theirs)
                             if np.float32(mine[a]).tobytes() !=
                             np.float32(theirs[a]).tobytes())
    return res


def opencv_nms(b, s, c, mode, args):
    """cv2.dnn.NMSBoxes on xyxy boxes b (class-aware: each class moved
    4096 px away, farther than the boxes reach). The xywh rects are made
    before timing, as torchvision's tensors are."""
    if cv2 is None:
        return {"error": CV2_ERROR}
    x1, y1 = b[:, 0].astype(np.float64), b[:, 1].astype(np.float64)
    w, h = b[:, 2] - x1, b[:, 3] - y1
    if mode == "classes":
        off = c.astype(np.float64) * 4096.0
        x1, y1 = x1 + off, y1 + off
    rects = np.stack([x1, y1, w, h], 1)
    scores = np.ascontiguousarray(s, dtype=np.float32)
    timer = Timer(torch.device("cpu"), args)
    rec, keep = timer.run(lambda: torch.from_numpy(np.asarray(
        cv2.dnn.NMSBoxes(rects, scores, 0.0, IOU_NMS),
        dtype=np.int64).reshape(-1)))
    rec["kept"] = int(keep.size)
    rec["keep"] = keep.ravel()
    return rec


def decode(t, yolov5, xp):
    """Best class, score and clipped xyxy boxes of every anchor (xp: torch
    or numpy). Same float32 operations as cudanms (no FMA on either side)."""
    if yolov5:
        x = t[0]
        cls = x[:, 5:]
        obj = x[:, 4]
    else:
        x = t[0].T
        cls = x[:, 4:]
    if xp is torch:
        best, c = cls.max(1)
    else:
        c = cls.argmax(1)
        best = np.take_along_axis(cls, c[:, None], 1)[:, 0]
    score = obj * best if yolov5 else best
    hw, hh = x[:, 2] * 0.5, x[:, 3] * 0.5
    lo, hi = 0.0, FRAME
    clip = (lambda v: v.clamp(lo, hi)) if xp is torch else \
        (lambda v: np.clip(v, np.float32(lo), np.float32(hi)))
    x1, y1 = clip(x[:, 0] - hw), clip(x[:, 1] - hh)
    x2, y2 = clip(x[:, 0] + hw), clip(x[:, 1] + hh)
    ok = (score > SCORE) & (x2 > x1) & (y2 > y1)
    if xp is torch:
        ok &= torch.isfinite(score) & torch.isfinite(hw) & torch.isfinite(hh)
    else:
        ok &= np.isfinite(score) & np.isfinite(hw) & np.isfinite(hh)
    return score, c, (x1, y1, x2, y2), ok


def torch_post(t, yolov5):
    score, c, (x1, y1, x2, y2), ok = decode(t, yolov5, torch)
    idx = ok.nonzero().squeeze(1)
    boxes = torch.stack([x1[idx], y1[idx], x2[idx], y2[idx]], 1)
    s, cl = score[idx], c[idx]
    keep = batched_nms(boxes, s, cl, IOU_FRAME)[:TOP]
    return torch.cat([boxes[keep], s[keep, None], cl[keep, None].float(),
                      idx[keep, None].float()], 1)


def opencv_post(t, yolov5):
    score, c, (x1, y1, x2, y2), ok = decode(t, yolov5, np)
    idx = np.nonzero(ok)[0]
    off = c[idx].astype(np.float64) * 4096.0  # class-aware by offsets
    rects = np.stack([x1[idx] + off, y1[idx] + off, x2[idx] - x1[idx],
                      y2[idx] - y1[idx]], 1)
    # top_k caps the candidates entering NMS, not the result: cap after
    keep = np.asarray(cv2.dnn.NMSBoxes(rects.tolist(), score[idx].tolist(),
                                       SCORE, IOU_FRAME),
                      dtype=np.int64).reshape(-1)[:TOP]
    k = idx[keep]
    return np.stack([x1[k], y1[k], x2[k], y2[k], score[k],
                     c[k].astype(np.float32), k.astype(np.float32)], 1)


def compare_dets(ours, ref):
    """ours: [K,7] x1 y1 x2 y2 score class anchor; ref (cudanms): score x1
    y1 x2 y2 class anchor."""
    res = compare_lists(ours[:, 6], ref[:, 6])
    mine = {int(r[6]): (r[4], r[0], r[1], r[2], r[3], r[5]) for r in ours}
    theirs = {int(r[6]): tuple(r[:6]) for r in ref}
    res["value_diffs"] = sum(1 for a in set(mine) & set(theirs)
                             if np.float32(mine[a]).tobytes() !=
                             np.float32(theirs[a]).tobytes())
    return res


def bench_frames(data, dev, args, timer, records):
    path = os.path.join(data, "yolov8_obb.npy")
    if os.path.exists(path):
        t = torch.from_numpy(np.load(path)).to(dev)
        rec, dets = timer.run(lambda: torch_obb_post(t))
        rec.update({"bench": "frame", "impl": "torch-post-" + dev.type,
                    "layout": "yolov8_obb", "input": "device",
                    "dets": len(dets)})
        ref = reference(args.cudanms_dir, "dets_%s_yolov8_obb.npy")
        if ref is not None:
            rec["vs"] = ref[0]
            rec.update(compare_dets_obb(dets, ref[1]))
        records.append(rec)
        report(rec)
    for layout in ("yolov8", "yolov5"):
        arr = np.load(os.path.join(data, layout + ".npy"))
        t = torch.from_numpy(arr).to(dev)
        rec, dets = timer.run(lambda: torch_post(t, layout == "yolov5"))
        rec.update({"bench": "frame", "impl": "torch-post-" + dev.type,
                    "layout": layout, "input": "device", "dets": len(dets)})
        ref = reference(args.cudanms_dir, "dets_%%s_%s.npy" % layout)
        if ref is not None:
            rec["vs"] = ref[0]
            rec.update(compare_dets(dets, ref[1]))
        records.append(rec)
        report(rec)
        if args.opencv and cv2 is None:
            rec = {"bench": "frame", "impl": "opencv-nmsboxes-cpu",
                   "layout": layout, "input": "host", "error": CV2_ERROR}
            records.append(rec)
            report(rec)
        elif args.opencv:
            cv_timer = Timer(torch.device("cpu"), args)
            rec, dets = cv_timer.run(
                lambda: torch.from_numpy(opencv_post(arr, layout == "yolov5")))
            rec.update({"bench": "frame", "impl": "opencv-nmsboxes-cpu",
                        "layout": layout, "input": "host", "dets": len(dets)})
            if ref is not None:
                rec["vs"] = ref[0]
                rec.update(compare_dets(dets, ref[1]))
            records.append(rec)
            report(rec)


def ultralytics_nms_images(pred, nc=0, rotated=False, conf=SCORE,
                           iou=IOU_FRAME, max_det=TOP, max_nms=30000,
                           max_wh=7680):
    """ultralytics' non_max_suppression of a [B, 4+nc+nm, N] batch as its
    code runs it (class-aware, best class only, no class filter, no
    labels), written for the bench: nc classes (0: all rows after the box
    are classes), the nm rows after them carried along (mask coefficients,
    keypoints, the OBB angle); the anchors whose best class is above conf,
    xywh to xyxy (not for rotated boxes), per image: its best class, its
    top max_nms by score, NMS on class-offset boxes (torchvision's nms, or
    for rotated boxes the probiou matrix and Fast-NMS of fast_nms_obb:
    ultralytics' nms_rotated), max_det. Returns a list of B tensors [k,
    6+nm]: x1 y1 x2 y2 (cx cy w h if rotated) score class, then the nm
    carried columns."""
    nc = nc or pred.shape[1] - 4
    nm = pred.shape[1] - nc - 4
    xc = pred[:, 4:4 + nc].amax(1) > conf
    p = pred.transpose(-1, -2)
    if not rotated:
        p = p.clone()
        xy, wh = p[..., :2], p[..., 2:4] / 2
        p[..., :4] = torch.cat((xy - wh, xy + wh), -1)
    out = []
    for xi, x in enumerate(p):
        x = x[xc[xi]]
        if not x.shape[0]:
            out.append(pred.new_zeros((0, 6 + nm)))
            continue
        box, cls = x[:, :4], x[:, 4:4 + nc]
        cf, j = cls.max(1, keepdim=True)
        x = torch.cat((box, cf, j.float(), x[:, 4 + nc:]) if nm else
                      (box, cf, j.float()), 1)[cf.view(-1) > conf]
        if not x.shape[0]:
            out.append(pred.new_zeros((0, 6 + nm)))
            continue
        if x.shape[0] > max_nms:
            x = x[x[:, 4].argsort(descending=True)[:max_nms]]
        if rotated:
            # obb_nms: centres moved by class x OBB_MAX_WH (max_wh)
            i = obb_nms(torch.cat((x[:, :4], x[:, -1:]), 1), x[:, 4],
                        x[:, 5], iou, True)[:max_det]
        else:
            c = x[:, 5:6] * max_wh
            i = torchvision.ops.nms(x[:, :4] + c, x[:, 4], iou)[:max_det]
        out.append(x[i])
    return out


def with_image(dets):
    """The images' [k, C] results as one [K, C+1], the image index last."""
    out = [torch.cat((d, torch.full_like(d[:, :1], xi)), 1)
           for xi, d in enumerate(dets) if d.shape[0]]
    return torch.cat(out) if out else dets[0].new_zeros(
        (0, dets[0].shape[1] + 1))


def ultralytics_nms(pred):
    """The YOLOv8 batch [B, 84, N]: [K, 7] x1 y1 x2 y2 score class image."""
    return with_image(ultralytics_nms_images(pred))


def ultralytics_obb(pred):
    """ultralytics' OBB predictor's NMS (rotated=True, nc = the model's
    classes: all rows but the box and the angle, the angle the one carried
    row) of a [B, 4+nc+1, N] batch: [K, 8] cx cy w h score class angle
    image (its regularize_rboxes, a reordering of w, h and the angle, and
    the scaling to the frame left out, as the single-frame anchor does)."""
    return with_image(ultralytics_nms_images(pred, pred.shape[1] - 5,
                                             rotated=True))


def ultralytics_pose(pred, nc=1, kpt_shape=POSE_KPT_SHAPE):
    """ultralytics' pose predictor of a [B, 4+nc+17x3, N] batch: NMS with
    the keypoints carried, each image's kept keypoints as [k, 17, 3] (its
    scale_boxes / scale_coords: the identity with the clip left out, model
    == frame); [K, 6+1+51] x1 y1 x2 y2 score class image, then the
    keypoints (x y visibility, 17 times)."""
    out = []
    for xi, d in enumerate(ultralytics_nms_images(pred, nc)):
        if not d.shape[0]:
            continue
        kpts = d[:, 6:].view(len(d), *kpt_shape)
        out.append(torch.cat((d[:, :6], torch.full_like(d[:, :1], xi),
                              kpts.flatten(1)), 1))
    return torch.cat(out) if out else pred.new_zeros(
        (0, 7 + kpt_shape[0] * kpt_shape[1]))


def ultralytics_seg(pred, protos):
    """ultralytics' segment predictor of a [B, 4+nc+32, N] batch with its
    [B, 32, 160, 160] prototypes (nc = the rows less the box and the 32
    coefficients, as the predictor takes it): NMS with the 32 coefficients
    carried,
    then per image process_mask (upsample=True): coefficients times the
    image's prototypes, crop at the prototypes' resolution (crop_mask,
    boxes scaled by 160 / 640), bilinear upsample to 640x640, > 0. One
    uint8 result, as torch_seg_post's: the [K, 7] records (x1 y1 x2 y2
    score class image, float32 bytes), then the [K, 640, 640] masks."""
    m, ph, pw = protos.shape[1:]
    dets = ultralytics_nms_images(pred, pred.shape[1] - 4 - m)
    scale = torch.tensor([pw / FRAME, ph / FRAME, pw / FRAME, ph / FRAME],
                         device=pred.device)
    r = torch.arange(pw, device=pred.device,
                     dtype=torch.float32)[None, None, :]
    cc = torch.arange(ph, device=pred.device,
                      dtype=torch.float32)[None, :, None]
    masks = []
    for i, d in enumerate(dets):
        if not d.shape[0]:
            continue
        lg = (d[:, 6:] @ protos[i].float().view(m, -1)).view(-1, ph, pw)
        bx1, by1, bx2, by2 = torch.chunk((d[:, :4] * scale)[:, :, None], 4,
                                         1)
        lg = lg * ((r >= bx1) * (r < bx2) * (cc >= by1) * (cc < by2))
        lg = torch.nn.functional.interpolate(
            lg[None], (int(FRAME), int(FRAME)), mode="bilinear",
            align_corners=False)[0].gt_(0.0)
        masks.append(lg.to(torch.uint8).reshape(-1))
    head = with_image([d[:, :6] for d in dets]).contiguous().view(
        torch.uint8).reshape(-1)
    return torch.cat([head] + masks)


BATCH_LAYOUTS = ("yolov8", "yolov8_obb", "yolov8_pose", "yolov8_seg")


def bench_batch(data, dev, args, timer, records):
    """ultralytics' batched post-process of B copies of a frame as one
    [B, ...] tensor on the device, for each of --batch-layouts: the anchor
    of bench-batch's rows."""
    for layout in args.batch_layouts:
        path = os.path.join(data, layout + ".npy")
        impl = "ultralytics-nms-" + ("" if layout == "yolov8" else
                                     layout[len("yolov8_"):] + "-") + \
            dev.type
        if not os.path.exists(path):
            rec = {"bench": "batch", "impl": impl, "layout": layout,
                   "error": "no %s" % path}
            records.append(rec)
            report(rec)
            continue
        one = torch.from_numpy(np.load(path)).to(dev)
        protos = None
        if layout == "yolov8_seg":
            protos = torch.from_numpy(np.load(os.path.join(
                data, "yolov8_seg_protos.npy"))).to(dev)
        fn = {"yolov8": ultralytics_nms, "yolov8_obb": ultralytics_obb,
              "yolov8_pose": ultralytics_pose}.get(layout)
        for b in args.batch:
            rec = {"bench": "batch", "impl": impl, "layout": layout,
                   "input": "device", "batch": b}
            if layout == "yolov8_seg" and dev.type == "cpu" \
                    and b > SEG_CPU_MAX_B:
                record_error(records, rec, "not run on the CPU above B=%d "
                             "(the batch's masks, K x 640 x 640 bytes, twice "
                             "in host memory)" % SEG_CPU_MAX_B)
                continue
            # the B copies made on the device (no B-fold host copy)
            t = one.expand(b, *one.shape[1:]).contiguous()
            pr = None if protos is None else \
                protos.expand(b, *protos.shape[1:]).contiguous()
            try:
                if pr is None:
                    r, dets = timer.run(lambda: fn(t))
                else:
                    r, dets = timer.run(lambda: ultralytics_seg(t, pr))
            except RuntimeError as e:  # out of memory
                t = pr = None  # the batch freed before the next
                record_error(records, rec, oom_error(dev, e))
                continue
            t = pr = None  # the batch freed before the next
            rec.update(r)
            n = int(dets.size // (28 + int(FRAME) * int(FRAME))) \
                if layout == "yolov8_seg" else len(dets)
            rec["dets"] = n
            for k in ("wall_med_us", "wall_min_us", "gpu_med_us",
                      "gpu_min_us"):
                if rec.get(k) is not None:
                    rec[k.replace("_us", "_frame_us")] = rec[k] / b
            records.append(rec)
            report(rec)
            print("torch batch %sB=%d: %.2f us GPU, %.2f us wall a frame "
                  "(%d dets)"
                  % ("" if layout == "yolov8" else layout + " ", b,
                     rec["gpu_med_us"] / b if rec.get("gpu_med_us") else
                     float("nan"), rec["wall_med_us"] / b, n), flush=True)
            del dets


def ultralytics_scale(d, shape, model=(int(FRAME), int(FRAME))):
    """ultralytics' scale_boxes and clip_boxes of one image's result d
    [k, 6] (x1 y1 x2 y2 in model pixels) into its image of shape (h, w),
    in place, as its code runs them: the letterbox gain and pads in Python
    (the pads rounded as it rounds them), the pads subtracted, the boxes
    divided by the gain (a float32 tensor by a Python float: on the CPU a
    float32 division, on CUDA torch multiplies by the float32 reciprocal),
    each coordinate clamped to the image."""
    gain = min(model[0] / shape[0], model[1] / shape[1])
    pad = (round((model[1] - shape[1] * gain) / 2 - 0.1),
           round((model[0] - shape[0] * gain) / 2 - 0.1))
    d[..., 0] -= pad[0]
    d[..., 1] -= pad[1]
    d[..., 2] -= pad[0]
    d[..., 3] -= pad[1]
    d[..., :4] /= gain
    d[..., 0] = d[..., 0].clamp(0, shape[1])
    d[..., 1] = d[..., 1].clamp(0, shape[0])
    d[..., 2] = d[..., 2].clamp(0, shape[1])
    d[..., 3] = d[..., 3].clamp(0, shape[0])
    return d


def tiles_post(pred, views):
    """The detector's post-process of the slices [B, 84, N] as ultralytics
    runs it (its batched non_max_suppression, ultralytics_nms_images), each
    image's result then scaled into its view (a slice, or the whole frame
    last) by ultralytics_scale: [K, 7] x1 y1 x2 y2 score class image, in
    each view's own pixels."""
    dets = ultralytics_nms_images(pred)
    for d, (x1, y1, x2, y2) in zip(dets, views):
        ultralytics_scale(d, (y2 - y1, x2 - x1))
    return with_image(dets)


def tiles_preds(dets, views):
    """SAHI's per-slice predictions of the host result dets [K, 7]: a list
    of (boxes, scores, classes) a view, in view pixels, the model's
    order."""
    out = []
    for v in range(len(views)):
        r = dets[dets[:, 6] == v]
        out.append((r[:, :4].astype(np.float64), r[:, 4].astype(np.float64),
                    r[:, 5].astype(np.int64)))
    return out


def sahi_assemble(preds, views, fw, fh):
    """get_sliced_prediction's assembly (sahi_ref.slice_to_frame of each
    view, the whole frame last): the frame's records as merge() takes
    them."""
    boxes, scores, classes = [], [], []
    for (b, s, c), (x0, y0, _, _) in zip(preds, views):
        fb, kept = sahi_ref.slice_to_frame(b, (x0, y0), fh, fw)
        boxes.extend(fb.tolist())
        scores.extend(s[kept].tolist())
        classes.extend(c[kept].tolist())
    return boxes, scores, classes


def sahi_reference(dets, views, fw, fh):
    """The frame's records of the host result dets (SAHI's assembly) and
    their merge by sahi_ref with its groups: (boxes, scores, classes,
    merge's (boxes, scores, classes, groups))."""
    boxes, scores, classes = sahi_assemble(tiles_preds(dets, views), views,
                                           fw, fh)
    return boxes, scores, classes, sahi_ref.merge(
        boxes, scores, classes, *TILES_MERGE, return_groups=True)


def sahi_whole(pred, views, fw, fh):
    """The SAHI-rule anchor end to end: the slices' post-process on the
    device, its result to the host, SAHI's assembly and merge as the
    reference writes them (sahi_ref.combine_sliced: greedy NMM, IoS, 0.5,
    each class alone): [M, 6] x1 y1 x2 y2 score class (float64)."""
    dets = tiles_post(pred, views).cpu().numpy()
    preds = tiles_preds(dets, views)
    b, s, c = sahi_ref.combine_sliced(fh, fw, views[:-1], preds[:-1],
                                      preds[-1], *TILES_MERGE)
    return np.concatenate([b, s[:, None], c[:, None]], 1)


def tv_merge(b, s, c):
    """The usual fast substitute for SAHI's merge: torchvision's
    batched_nms (IoU, each class alone) at SAHI's threshold on the
    frame's records; [M, 6] x1 y1 x2 y2 score class."""
    k = batched_nms(b, s, c, TILES_MERGE[2])
    return torch.cat([b[k], s[k, None], c[k, None].to(b.dtype)], 1)


def tv_whole(pred, views, shifts, fw, fh):
    """The same end to end on the device: the slices' post-process,
    SAHI's clip and drop in view pixels, the shift into the frame (in
    float32), tv_merge; [M, 6] to the host."""
    d = tiles_post(pred, views)
    b = d[:, :4].clamp(min=0)
    b[:, 0::2] = b[:, 0::2].clamp(max=fw)
    b[:, 1::2] = b[:, 1::2].clamp(max=fh)
    ok = (b[:, 0] < b[:, 2]) & (b[:, 1] < b[:, 3])
    img = d[ok, 6].long()
    return tv_merge(b[ok] + shifts[img], d[ok, 4], d[ok, 5].long())


def compare_tiles(merged, ref):
    """merged: sahi_ref.merge's (boxes, scores, classes, groups); ref
    (cudanms): [K, 7] score x1 y1 x2 y2 class anchor. The keeping
    records' symmetric difference, the order, and the keepers in both
    whose float32 score, box or class differ."""
    b, s, c, g = merged
    res = compare_lists([k for k, _, _ in g], ref[:, 6])
    mine = {k: (s[i], b[i][0], b[i][1], b[i][2], b[i][3], c[i])
            for i, (k, _, _) in enumerate(g)}
    theirs = {int(r[6]): tuple(r[:6]) for r in ref}
    res["value_diffs"] = sum(1 for a in set(mine) & set(theirs)
                             if np.float32(mine[a]).tobytes() !=
                             np.float32(theirs[a]).tobytes())
    return res


def compare_records(dets, views, fw, fh, ref):
    """The slices' records: ours (tiles_post on the host, [K, 7] x1 y1 x2
    y2 score class image; those SAHI's map keeps) against cudanms's
    records_*_tiles.npy [R, 7] score x1 y1 x2 y2 class slice, view by
    view: how many records (float32 score, box, class) of either are not
    the other's ("mismatch"), and whether each view's are in the same
    order."""
    diff, order = 0, True
    for v in range(len(views)):
        r = dets[dets[:, 6] == v]
        _, kept = sahi_ref.slice_to_frame(r[:, :4], (0, 0), fh, fw)
        mine = [np.float32(x[[4, 0, 1, 2, 3, 5]]).tobytes() for x in r[kept]]
        theirs = [np.float32(x[:6]).tobytes() for x in ref[ref[:, 6] == v]]
        diff += len(set(mine) ^ set(theirs))
        order &= mine == theirs
    return {"mismatch": diff, "same_order": order}


def bench_tiles(data, dev, args, timer, records):
    """The tiles' anchors (bench-tiles): the slices' post-process as
    ultralytics runs it, SAHI's assembly and merge by sahi_ref (its rule),
    and the same records merged by torchvision's batched_nms."""
    path = os.path.join(data, "tiles.npy")
    base = {"bench": "tiles", "layout": "tiles"}
    if not os.path.exists(path):
        rec = dict(base, impl="sahi-merge-numpy", error="no %s" % path)
        records.append(rec)
        report(rec)
        return
    with open(os.path.join(data, "params.json")) as f:
        p = json.load(f)["tiles"]
    fw, fh = p["frame"]
    views = sahi_ref.slice_bboxes(fh, fw, p["slice"][1], p["slice"][0],
                                  p["overlap"], p["overlap"])
    views.append([0, 0, fw, fh])
    pred = torch.from_numpy(np.load(path)).to(dev)
    if pred.shape[0] != len(views):
        sys.exit("bench_torch: tiles.npy holds %d frames, the grid and the "
                 "whole frame are %d (run gen_data.py again)"
                 % (pred.shape[0], len(views)))
    host = Timer(torch.device("cpu"), args)
    base.update({"slices": len(views), "frame_width": fw,
                 "frame_height": fh})
    # (a) the slices' post-process, then SAHI's assembly and merge
    post, dets = timer.run(lambda: tiles_post(pred, views))
    post.update(base, impl="ultralytics-nms-" + dev.type, input="device",
                dets=len(dets))
    rref = reference(args.cudanms_dir or data, "records_%s_tiles.npy")
    if rref is not None:
        post["vs"] = rref[0]
        post.update(compare_records(dets, views, fw, fh, rref[1]))
    records.append(post)
    report(post)
    boxes, scores, classes, merged = sahi_reference(dets, views, fw, fh)
    sm, _ = host.run(lambda: torch.from_numpy(sahi_ref.merge(
        boxes, scores, classes, *TILES_MERGE)[1]))
    sm.update(base, impl="sahi-merge-numpy", input="host",
              records=len(scores), dets=len(merged[1]),
              merged=sum(len(x[1]) for x in merged[3]),
              dropped=sum(len(x[2]) for x in merged[3]))
    ref = reference(args.cudanms_dir or data, "dets_%s_tiles.npy")
    if ref is not None:
        sm["vs"] = ref[0]
        sm["cudanms_dets"] = len(ref[1])
        sm.update(compare_tiles(merged, ref[1]))
    if ref is not None and rref is not None and dev.type == "cuda":
        # the same post-process on the CPU (untimed): torch divides by the
        # whole frame's gain there, as cudanms's contract does, where on
        # CUDA it multiplies by its float32 reciprocal (1 ulp apart)
        hd = tiles_post(pred.cpu(), views).numpy()
        r = compare_tiles(sahi_reference(hd, views, fw, fh)[3], ref[1])
        sm.update({"host_post_" + k: v for k, v in r.items()})
        sm["host_post_record_mismatch"] = compare_records(
            hd, views, fw, fh, rref[1])["mismatch"]
    records.append(sm)
    report(sm)
    sw, whole = host.run(lambda: torch.from_numpy(sahi_whole(pred, views,
                                                             fw, fh)))
    sw.update(base, impl="ultralytics-sahi-" + dev.type, input="device",
              dets=len(whole))
    records.append(sw)
    report(sw)
    # (b) the same records merged by batched_nms (IoU, each class alone)
    b = torch.tensor(boxes, dtype=torch.float32, device=dev).view(-1, 4)
    s = torch.tensor(scores, dtype=torch.float32, device=dev)
    c = torch.tensor(classes, dtype=torch.int64, device=dev)
    tm, out = timer.run(lambda: tv_merge(b, s, c))
    tm.update(base, impl="torchvision-batched_nms-merge-" + dev.type,
              input="device", records=len(scores), dets=len(out))
    records.append(tm)
    report(tm)
    shifts = torch.tensor([[x0, y0, x0, y0] for x0, y0, _, _ in views],
                          dtype=torch.float32, device=dev)
    tw, out = timer.run(lambda: tv_whole(pred, views, shifts, fw, fh))
    tw.update(base, impl="ultralytics-batched_nms-" + dev.type,
              input="device", dets=len(out))
    records.append(tw)
    report(tw)
    line = ("torch tiles %dx%d, %d slices: %d records; SAHI's merge %.1f us "
            "-> %d dets (%d merged, %d dropped), with the post-process %.1f "
            "us; batched_nms merge %.1f us -> %d dets, with the post-process "
            "%.1f us (wall)" % (fw, fh, len(views), len(scores),
                                sm["wall_med_us"], sm["dets"], sm["merged"],
                                sm["dropped"], sw["wall_med_us"],
                                tm["wall_med_us"], tm["dets"],
                                tw["wall_med_us"]))
    if "mismatch" in sm:
        line += "; vs %s: %d dets, %d mismatches%s, %d value diffs" % (
            sm["vs"], sm["cudanms_dets"], sm["mismatch"],
            "" if sm["same_order"] else ", order differs",
            sm["value_diffs"])
    if "mismatch" in post:
        line += ", the slices' records %d mismatches%s" % (
            post["mismatch"], "" if post["same_order"] else
            ", order differs")
    if "host_post_mismatch" in sm:
        line += "; the post-process on the CPU: %d record mismatches, %d " \
            "mismatches, %d value diffs" % (sm["host_post_record_mismatch"],
                                            sm["host_post_mismatch"],
                                            sm["host_post_value_diffs"])
    print(line, flush=True)


def torch_seg_post(t, protos, masks_to_host=True):
    """ultralytics' process_mask after the frame's NMS: one uint8 tensor,
    the [K, 7] records' bytes, then (masks_to_host) the [K, 640, 640]
    masks."""
    score, c, (x1, y1, x2, y2), ok = decode(t[:, :4 + SEG_CLASSES], False,
                                            torch)
    idx = ok.nonzero().squeeze(1)
    boxes = torch.stack([x1[idx], y1[idx], x2[idx], y2[idx]], 1)
    s, cl = score[idx], c[idx]
    keep = batched_nms(boxes, s, cl, IOU_FRAME)[:TOP]
    k = idx[keep]
    kb = boxes[keep]
    dets = torch.cat([kb, s[keep, None], cl[keep, None].float(),
                      k[:, None].float()], 1)
    m, ph, pw = protos.shape[1:]
    coef = t[0, 4 + SEG_CLASSES:, k].T
    masks = (coef @ protos[0].reshape(m, -1)).view(-1, ph, pw)
    # crop_mask at the prototypes' resolution (boxes / 4: model == frame)
    db = kb * torch.tensor([pw / FRAME, ph / FRAME, pw / FRAME, ph / FRAME],
                           device=kb.device)
    bx1, by1, bx2, by2 = torch.chunk(db[:, :, None], 4, 1)
    r = torch.arange(pw, device=t.device, dtype=db.dtype)[None, None, :]
    cc = torch.arange(ph, device=t.device, dtype=db.dtype)[None, :, None]
    masks = masks * ((r >= bx1) * (r < bx2) * (cc >= by1) * (cc < by2))
    masks = torch.nn.functional.interpolate(
        masks[None], (int(FRAME), int(FRAME)), mode="bilinear",
        align_corners=False)[0].gt_(0.0)
    head = dets.contiguous().view(torch.uint8).reshape(-1)
    if not masks_to_host:
        return head
    return torch.cat([head, masks.to(torch.uint8).reshape(-1)])


def retina_masks(t, protos, dets):
    """ultralytics' retina_masks rule (process_mask_native: upsample the
    whole logits to the frame, then crop by pixel index) at the records'
    anchors and boxes, on the CPU: [K, 640 x 640] bool."""
    t, protos = t.cpu(), protos.cpu()
    k = torch.from_numpy(dets[:, 6].astype(np.int64))
    m, ph, pw = protos.shape[1:]
    lg = (t[0, 4 + SEG_CLASSES:, k].T @ protos[0].reshape(m, -1)).view(
        -1, ph, pw)
    up = torch.nn.functional.interpolate(
        lg[None], (int(FRAME), int(FRAME)), mode="bilinear",
        align_corners=False)[0]
    b = torch.from_numpy(dets[:, 1:5])
    r = torch.arange(FRAME)[None, None, :]
    c = torch.arange(FRAME)[None, :, None]
    x1, y1, x2, y2 = [b[:, i, None, None] for i in range(4)]
    keep = (up > 0) & (r >= x1) & (r < x2) & (c >= y1) & (c < y2)
    return keep.numpy().reshape(len(dets), -1)


def seg_compare(out, cdir, t, protos):
    """Records and masks against cudanms's."""
    n = out.size
    k = n // (28 + int(FRAME) * int(FRAME))
    dets = out[:28 * k].view(np.float32).reshape(k, 7)
    masks = out[28 * k:].reshape(k, -1)
    res = {}
    ref = reference(cdir, "dets_%s_yolov8_seg.npy")
    if ref is None:
        return res
    res["vs"] = ref[0]
    res.update(compare_dets(dets, ref[1]))
    ref_masks = reference(cdir, "masks_%s_yolov8_seg.npy")
    if ref_masks is None:
        return res
    theirs = {int(a): i for i, a in enumerate(ref[1][:, 6])}
    ious, diff, total = [], 0, 0
    for i, a in enumerate(dets[:, 6]):
        j = theirs.get(int(a))
        if j is None:
            continue
        mine, their = masks[i] > 0, ref_masks[1][j] > 0
        union = np.count_nonzero(mine | their)
        ious.append(np.count_nonzero(mine & their) / union if union else 1.0)
        diff += int(np.count_nonzero(mine != their))
        total += int(np.count_nonzero(mine | their))
    retina = retina_masks(t, protos, ref[1])
    res["retina_pixels_differ"] = int(np.count_nonzero(
        retina != (ref_masks[1] > 0)))
    if ious:
        res["mask_iou_mean"] = float(np.mean(ious))
        res["mask_iou_min"] = float(np.min(ious))
        res["mask_pixels_differ"] = diff
        res["mask_pixels_union"] = total
    return res


def bench_seg(data, dev, args, timer, records):
    path = os.path.join(data, "yolov8_seg.npy")
    if not os.path.exists(path):
        return
    t = torch.from_numpy(np.load(path)).to(dev)
    protos = torch.from_numpy(np.load(os.path.join(
        data, "yolov8_seg_protos.npy"))).to(dev)
    for to_host in (True, False):
        rec, out = timer.run(lambda: torch_seg_post(t, protos, to_host))
        impl = "torch-seg-post-" if to_host else \
            "torch-seg-post-masks-on-device-"
        rec.update({"bench": "frame", "impl": impl + dev.type,
                    "layout": "yolov8_seg", "input": "device"})
        if to_host:
            rec.update(seg_compare(out, args.cudanms_dir, t, protos))
            rec["dets"] = int(out.size // (28 + int(FRAME) * int(FRAME)))
        else:
            rec["dets"] = int(out.size // 28)
        records.append(rec)
        report(rec)
        if "mask_iou_mean" in rec:
            print("    masks vs %s: mean IoU %.4f (min %.4f), %d of %d "
                  "pixels differ (ultralytics crops at 160x160, then "
                  "upsamples)" % (rec["vs"], rec["mask_iou_mean"],
                                  rec["mask_iou_min"],
                                  rec["mask_pixels_differ"],
                                  rec["mask_pixels_union"]), flush=True)
        if "retina_pixels_differ" in rec:
            print("    masks vs %s by ultralytics' retina_masks rule "
                  "(upsample, then crop; torch on the CPU): %d pixels "
                  "differ" % (rec["vs"], rec["retina_pixels_differ"]),
                  flush=True)


def torch_lane_post(t):
    """LaneATT's post-process of t [1, N, 5 + S] on t's device: [K, 2]
    (score, anchor) of the kept lanes, in kept order."""
    p = t[0]
    S = p.shape[1] - 5
    n = S - 1
    f32, f64 = torch.float32, torch.float64
    score = torch.softmax(p[:, :2].to(f64), 1)[:, 1].to(f32)
    sy, L = p[:, 2], p[:, 4]
    v = (sy * torch.tensor(float(n), dtype=f32, device=p.device)).to(f64) \
        + 0.5
    ok = (score > LANE_SCORE) & torch.isfinite(sy) & torch.isfinite(L) & \
        (L.to(f64).abs() <= LANE_MAX_LENGTH) & (v > -1.0) & (v < n + 1.0)
    idx = ok.nonzero().squeeze(1)
    sc = score[idx]
    order = torch.sort(-sc, stable=True).indices   # ties: lower index
    idx, sc = idx[order], sc[order]
    q = p[idx]
    st = v[idx].trunc().to(torch.int64)
    Lq = q[:, 4]
    ev = ((st.to(f32) + Lq) - 1.0).to(f64)
    en = ((ev + 0.5) - ((Lq - 1.0) < 0).to(f64)).trunc().to(torch.int64)
    s = torch.maximum(st[:, None], st[None, :])
    e = torch.clamp(torch.minimum(en[:, None], en[None, :]), max=n)
    rows = torch.arange(S, device=p.device)
    inr = (rows >= s[..., None]) & (rows <= e[..., None])     # [K, K, S]
    x = q[:, 5:]
    d = (x[:, None, :] - x[None, :, :]).abs()
    dist = torch.where(inr, d, torch.zeros((), dtype=f32,
                                           device=p.device)).sum(2)
    thr = LANE_DISTANCE * (e - s + 1).to(f32)
    M = ((e >= s) & (dist < thr)).cpu().numpy()
    removed = np.zeros(len(M), bool)
    kept = []
    for j in range(len(M)):
        if len(kept) >= LANE_TOP_K:
            break
        if removed[j]:
            continue
        kept.append(j)
        removed |= M[j]
    k = torch.as_tensor(kept, dtype=torch.int64, device=p.device)
    return torch.stack([sc[k], idx[k].to(f32)], 1)


def compare_lanes(ours, ref):
    """ours: [K,2] score anchor; ref (cudanms): score x1 y1 x2 y2 class
    anchor."""
    res = compare_lists(ours[:, 1], ref[:, 6])
    mine = {int(r[1]): r[0] for r in ours}
    theirs = {int(r[6]): r[0] for r in ref}
    res["value_diffs"] = sum(1 for a in set(mine) & set(theirs)
                             if np.float32(mine[a]) != np.float32(theirs[a]))
    return res


def bench_lanes(data, dev, args, timer, records):
    path = os.path.join(data, "laneatt.npy")
    if not os.path.exists(path):
        return
    t = torch.from_numpy(np.load(path)).to(dev)
    rec, dets = timer.run(lambda: torch_lane_post(t))
    rec.update({"bench": "frame", "impl": "torch-lanes-" + dev.type,
                "layout": "laneatt", "input": "device", "dets": len(dets),
                "kept": [int(a) for a in dets[:, 1]]})
    ref = reference(args.cudanms_dir, "dets_%s_laneatt.npy")
    if ref is not None:
        rec["vs"] = ref[0]
        rec.update(compare_lanes(dets, ref[1]))
    records.append(rec)
    report(rec)


def report(rec):
    what = "%s N=%d" % (rec["mode"], rec["n"]) \
        if rec["bench"] in ("nms", "nms_rotated") else rec["layout"]
    if "error" in rec:
        print("%-28s %-18s NOT MEASURED: %s" % (rec["impl"], what,
                                                rec["error"]), flush=True)
        return
    line = "%-28s %-18s wall med %9.1f min %9.1f us" % (
        rec["impl"], what, rec["wall_med_us"], rec["wall_min_us"])
    if rec["gpu_med_us"] is not None:
        line += "  gpu med %9.1f min %9.1f us" % (rec["gpu_med_us"],
                                                   rec["gpu_min_us"])
    line += "  (%d iters)" % rec["iters"]
    if "mismatch" in rec:
        line += "  vs %s: %d mismatches%s" % (
            rec["vs"], rec["mismatch"], "" if rec["same_order"] else
            ", order differs")
        if rec.get("value_diffs"):
            line += ", %d value diffs" % rec["value_diffs"]
    print(line, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--budget", type=float, default=60.0)
    ap.add_argument("--min-time", type=float, default=0.0,
                    help="go on past --iters until this many seconds are "
                    "timed (a median over a window of the machine's load)")
    ap.add_argument("--cudanms-dir")
    ap.add_argument("--opencv", action="store_true")
    ap.add_argument("--batch", type=lambda v: [int(x) for x in v.split(",")],
                    help="only ultralytics' batched post-process of B "
                    "copies of each --batch-layouts frame as one [B, ...] "
                    "tensor, at these B (bench-batch's anchor)")
    ap.add_argument("--tiles", action="store_true",
                    help="only the tiles' anchors (bench-tiles'): the 33 "
                    "slices of tiles.npy post-processed as ultralytics "
                    "does, SAHI's assembly and merge (sahi_ref), and the "
                    "merge by batched_nms")
    ap.add_argument("--batch-layouts", default=",".join(BATCH_LAYOUTS),
                    type=lambda v: [x for x in v.split(",") if x],
                    help="the frames of --batch, any of %s (default: all)"
                    % ",".join(BATCH_LAYOUTS))
    args = ap.parse_args()
    bad = [x for x in args.batch_layouts if x not in BATCH_LAYOUTS]
    if bad:
        ap.error("--batch-layouts: unknown %s (any of %s)"
                 % (",".join(bad), ",".join(BATCH_LAYOUTS)))
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("bench_torch: --device cuda, but torch sees no CUDA device "
                 "(use --device cpu for a dry run)")
    dev = torch.device(args.device)
    records = [env_record(dev)]
    if args.opencv and cv2 is None:
        print("bench_torch: %s: the OpenCV rows are NOT MEASURED (install "
              "python3-opencv)" % CV2_ERROR, flush=True)
        records[0]["opencv_error"] = CV2_ERROR
    elif args.opencv:
        records[0]["opencv"] = cv2.__version__
    print("bench_torch: %s" % json.dumps(records[0]), flush=True)
    timer = Timer(dev, args)
    if args.batch or args.tiles:
        if args.batch:
            bench_batch(args.data, dev, args, timer, records)
        if args.tiles:
            bench_tiles(args.data, dev, args, timer, records)
        with open(args.out, "w") as f:
            json.dump(records, f, indent=0)
        return
    bench_nms(args.data, dev, args, timer, records)
    bench_nms_rotated(args.data, dev, args, timer, records)
    bench_frames(args.data, dev, args, timer, records)
    bench_lanes(args.data, dev, args, timer, records)
    bench_seg(args.data, dev, args, timer, records)
    with open(args.out, "w") as f:
        json.dump(records, f, indent=0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Turns the benchmark JSON into Markdown tables, a plot and a target check.

usage: report.py [--gpu DIR] [--cpu DIR] [--bundle DIR] [--md FILE]
                 [--png FILE]

DIR holds what run-gpu.sh / run-cpu.sh wrote: meta.json and the record
lists nms.json, frame.json, element.json, torch.json, tiles.json (and on
the GPU host tiles_cpu.json), torch_tiles.json. Writes the tables to
--md (and stdout), the latency plot to --png (needs matplotlib; skipped
with a note when it is missing), and prints which performance targets are
met, missed or NOT MEASURED (a target whose anchor, or cudanms's own
figure, is missing from the run), with the figures. Measures nothing
itself.

Without arguments it reads the committed runs, results/data/gpu,
results/data/cpu and results/data/gpu/bundle (those that exist), and
writes results/results.md and results/latency.png (results/ beside this
script).
"""

import argparse
import glob
import json
import os
import sys

SIZES = (256, 1024, 2048, 4096, 8192, 16384, 32768)
# the committed runs and what is made of them (no arguments)
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def load(d):
    """(meta dict, record list) of one run directory."""
    meta, recs = {}, []
    if not d:
        return meta, recs
    if not os.path.isdir(d):
        sys.exit("report: %s is not a directory" % d)
    for p in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(p) as f:
            text = f.read()
        try:
            data = json.loads(text)
        except ValueError:
            # a bench that died leaves "[ {...}, {...}" behind: keep those
            try:
                data = json.loads(text.rstrip().rstrip(",") + "\n]")
                print("report: %s was cut short (the bench failed?); "
                      "using its %d complete records" % (p, len(data)),
                      file=sys.stderr)
            except ValueError:
                print("report: %s unreadable, skipped" % p, file=sys.stderr)
                continue
        if isinstance(data, dict):
            meta.update(data)
        else:
            recs.extend(data)
    return meta, recs


def find(recs, **kw):
    for r in recs:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def us(v):
    if v is None:
        return "n/a"
    if v >= 10000:
        return "%.1f ms" % (v / 1000)
    if v >= 100:
        return "%.0f us" % v
    return "%.1f us" % v


def mm(r, kind):
    """Median with the minimum beside it: "71.9 us (67.5)"."""
    if r is not None and "error" in r:
        return "NOT MEASURED"
    med, low = get(r, kind + "_med_us"), get(r, kind + "_min_us")
    if med is None or low is None:
        return us(med)
    return "%s (%s)" % (us(med), us(low).replace(" us", "").replace(" ms", " ms"))


def ratio(a, b):
    """a / b as 'x.x x', or n/a."""
    if a is None or b is None or b <= 0:
        return "n/a"
    return "%.1fx" % (a / b)


def ratio_of(other, ours):
    """other's wall time over ours, NOT MEASURED when other says so."""
    if other is not None and "error" in other:
        return "NOT MEASURED"
    return ratio(measured(other), measured(ours))


def get(r, k):
    return None if r is None else r.get(k)


def measured(r, k="wall_med_us"):
    """r's figure k, or None when r is missing or says it was not measured."""
    if r is None or "error" in r:
        return None
    return r.get(k)


def mism(r):
    if r is not None and "error" in r:
        return "NOT MEASURED"
    if r is None or "mismatch" not in r:
        return "n/a"
    s = [str(r["mismatch"])]
    if not r.get("same_order", True):
        s.append("order differs")
    if r.get("value_diffs"):
        s.append("%d value diffs" % r["value_diffs"])
    return "; ".join(s)


def table(head, rows):
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def env_lines(meta, recs, title):
    env = find(recs, bench="env") or {}
    lines = ["### %s" % title, ""]
    for k, label in (("date", "date"), ("gpu", "GPU"), ("driver", "driver"),
                     ("cuda", "CUDA (torch)"), ("cpu", "CPU"),
                     ("cpu_count", "CPU threads"), ("torch", "torch"),
                     ("torchvision", "torchvision"), ("opencv", "OpenCV"),
                     ("git", "commit"), ("command", "command")):
        v = meta.get(k, env.get(k))
        if v is not None:
            lines.append("- %s: `%s`" % (label, v) if k == "command"
                         else "- %s: %s" % (label, v))
    return "\n".join(lines) + "\n\n"


def nms_table(recs, dev):
    rows = []
    for mode, tv in (("agnostic", "torchvision-nms-" + dev),
                     ("classes", "torchvision-batched_nms-" + dev)):
        for n in SIZES:
            cu = find(recs, bench="nms", impl="cudanms-cuda", mode=mode, n=n)
            cp = find(recs, bench="nms", impl="cudanms-cpu", mode=mode, n=n)
            t = find(recs, bench="nms", impl=tv, mode=mode, n=n)
            if not (cu or cp or t):
                continue
            row = [n, mode, get(cu or cp or t, "kept")]
            if dev == "cuda":
                row += [mm(cu, "gpu"), mm(cu, "wall"),
                        mm(t, "gpu"), mm(t, "wall"),
                        ratio(get(t, "gpu_med_us"), get(cu, "gpu_med_us")),
                        ratio(get(t, "wall_med_us"), get(cu, "wall_med_us"))]
            if dev == "cuda":
                row += [mm(cp, "wall"),
                        ratio(get(t, "wall_med_us"), get(cp, "wall_med_us")),
                        mism(t)]
            else:
                cv = find(recs, bench="nms", impl="opencv-nmsboxes-cpu",
                          mode=mode, n=n)
                row += [mm(cp, "wall"), mm(t, "wall"), ratio_of(t, cp),
                        mm(cv, "wall"), ratio_of(cv, cp), mism(t), mism(cv)]
            rows.append(row)
    big = find(recs, bench="nms", impl="cudanms-cpu", mode="agnostic",
               n=1000000)
    if dev == "cpu" and big is not None:
        rows.append([1000000, "agnostic", big.get("kept"), mm(big, "wall"),
                     "not run", "", "not run", "", "", ""])
    head = ["N", "mode", "kept"]
    if dev == "cuda":
        head += ["cudanms GPU", "cudanms wall", "torchvision GPU",
                 "torchvision wall", "GPU ratio", "wall ratio",
                 "cudanms CPU backend wall", "torchvision / CPU backend",
                 "torchvision vs cudanms mismatches"]
    else:
        head += ["cudanms CPU backend", "torchvision CPU", "ratio",
                 "OpenCV NMSBoxes", "ratio", "torchvision mismatches",
                 "OpenCV mismatches"]
    return table(head, rows)


def frame_table_gpu(recs):
    rows = []
    for layout in ("yolov8", "yolov5", "yolov8_obb"):
        dv = find(recs, bench="frame", impl="cudanms-cuda", layout=layout,
                  input="device")
        hs = find(recs, bench="frame", impl="cudanms-cuda", layout=layout,
                  input="host")
        cp = find(recs, bench="frame", impl="cudanms-cpu", layout=layout)
        t = find(recs, bench="frame", impl="torch-post-cuda", layout=layout)
        if not (dv or hs or cp or t):
            continue
        rows.append([layout, get(dv or cp, "candidates"),
                     get(dv or cp, "dets"),
                     mm(dv, "gpu"), mm(dv, "wall"),
                     mm(hs, "gpu"), mm(hs, "wall"),
                     mm(t, "gpu"), mm(t, "wall"),
                     ratio(get(t, "gpu_med_us"), get(dv, "gpu_med_us")),
                     ratio(get(t, "wall_med_us"), get(dv, "wall_med_us")),
                     mm(cp, "wall"), mism(t)])
    head = ["frame", "candidates", "detections",
            "cudanms device GPU", "cudanms device wall",
            "cudanms host GPU", "cudanms host wall",
            "PyTorch GPU", "PyTorch wall", "GPU ratio", "wall ratio",
            "cudanms CPU backend wall", "PyTorch vs cudanms mismatches"]
    return table(head, rows)


def frame_table_cpu(recs):
    rows = []
    for layout in ("yolov8", "yolov5", "yolov8_obb"):
        cp = find(recs, bench="frame", impl="cudanms-cpu", layout=layout)
        t = find(recs, bench="frame", impl="torch-post-cpu", layout=layout)
        cv = find(recs, bench="frame", impl="opencv-nmsboxes-cpu",
                  layout=layout)
        if not (cp or t or cv):
            continue
        rows.append([layout, get(cp, "dets"),
                     "%s (min %s)" % (mm(cp, "wall"),
                                      us(get(cp, "wall_min_us"))),
                     mm(t, "wall"), mm(cv, "wall"), ratio_of(t, cp),
                     ratio_of(cv, cp), mism(t), mism(cv)])
    head = ["frame", "detections", "cudanms CPU backend",
            "torchvision CPU", "OpenCV NMSBoxes", "torchvision ratio",
            "OpenCV ratio", "torchvision mismatches", "OpenCV mismatches"]
    return table(head, rows)


def lanes_table(recs, dev):
    """cnms_detect (laneatt) on the LaneATT frame against the PyTorch lane
    post-process of the same run (dev: "cuda" or "cpu")."""
    t = find(recs, bench="frame", impl="torch-lanes-" + dev,
             layout="laneatt")
    cp = find(recs, bench="frame", impl="cudanms-cpu", layout="laneatt")
    if dev == "cuda":
        dv = find(recs, bench="frame", impl="cudanms-cuda", layout="laneatt",
                  input="device")
        hs = find(recs, bench="frame", impl="cudanms-cuda", layout="laneatt",
                  input="host")
        if not (dv or hs or t):
            return None
        row = ["laneatt", get(dv or cp, "candidates"), get(dv or cp, "dets"),
               mm(dv, "gpu"), mm(dv, "wall"), mm(hs, "gpu"), mm(hs, "wall"),
               mm(t, "gpu"), mm(t, "wall"),
               ratio(get(t, "gpu_med_us"), get(dv, "gpu_med_us")),
               ratio(get(t, "wall_med_us"), get(dv, "wall_med_us")),
               mm(cp, "wall"), mism(t)]
        head = ["frame", "candidates", "lanes kept", "cudanms device GPU",
                "cudanms device wall", "cudanms host GPU",
                "cudanms host wall", "PyTorch GPU", "PyTorch wall",
                "GPU ratio", "wall ratio", "cudanms CPU backend wall",
                "PyTorch vs cudanms mismatches"]
    else:
        if not (cp or t):
            return None
        row = ["laneatt", get(cp, "candidates"), get(cp, "dets"),
               mm(cp, "wall"), mm(t, "wall"), ratio_of(t, cp), mism(t)]
        head = ["frame", "candidates", "lanes kept", "cudanms CPU backend",
                "PyTorch CPU", "PyTorch ratio",
                "PyTorch vs cudanms mismatches"]
    return table(head, [row])


def lane_targets(g, c):
    """The lane issue's targets: 1000 LaneATT proposals (S = 72) on the
    device <= 15 us GPU time and >= 20x the PyTorch lane post-process
    (GPU time) of the same run; CPU backend <= 100 us."""
    out = []

    def verdict(ok):
        return "MET" if ok else "MISSED"

    dv = find(g, bench="frame", impl="cudanms-cuda", layout="laneatt",
              input="device")
    t = find(g, bench="frame", impl="torch-lanes-cuda", layout="laneatt")
    gpu = measured(dv, "gpu_med_us")
    if gpu is None:
        out.append("NOT MEASURED: LaneATT frame (1000 proposals, S = 72) "
                   "on the device <= 15 us GPU time")
        out.append("NOT MEASURED: LaneATT frame on the device >= 20x the "
                   "PyTorch lane post-process (GPU time)")
    else:
        out.append("%s: LaneATT frame (1000 proposals, S = 72) on the "
                   "device <= 15 us GPU time: %s (min %s), %s wall" % (
                       verdict(gpu <= 15.0), us(gpu),
                       us(dv.get("gpu_min_us")), us(dv.get("wall_med_us"))))
        tg = measured(t, "gpu_med_us")
        if tg is None:
            out.append("NOT MEASURED: LaneATT frame on the device >= 20x "
                       "the PyTorch lane post-process (no PyTorch figure)")
        else:
            out.append("%s: LaneATT frame on the device >= 20x the PyTorch "
                       "lane post-process (GPU time): %.1fx (%s vs %s; wall "
                       "%s)" % (verdict(tg / gpu >= 20), tg / gpu, us(tg),
                                us(gpu), ratio_of(t, dv)))
    cp = find(c, bench="frame", impl="cudanms-cpu", layout="laneatt")
    if measured(cp) is None:
        out.append("NOT MEASURED: CPU backend LaneATT frame <= 100 us")
    else:
        out.append("%s: CPU backend LaneATT frame <= 100 us: %s median "
                   "(min %s), on %s" % (
                       verdict(cp["wall_med_us"] <= 100.0),
                       us(cp["wall_med_us"]), us(cp["wall_min_us"]),
                       (find(c, bench="env") or {}).get("cpu", "?")))
    return out


def heads_table(recs):
    """The heads' frames on the GPU host: the seg and pose cnms_detect
    against the PyTorch seg post-process and the plain frame."""
    rows = []
    for layout in ("yolov8_seg", "yolov8_pose", "yolov8_pose_boxes",
                   "yolov8"):
        dv = find(recs, bench="frame", impl="cudanms-cuda", layout=layout,
                  input="device")
        hs = find(recs, bench="frame", impl="cudanms-cuda", layout=layout,
                  input="host")
        cp = find(recs, bench="frame", impl="cudanms-cpu", layout=layout,
                  input="host")
        if not (dv or hs or cp):
            continue
        rows.append([layout, get(dv or cp, "dets"), mm(dv, "gpu"),
                     mm(dv, "wall"), mm(hs, "gpu"), mm(hs, "wall"),
                     mm(cp, "wall"), get(dv, "same_as_cpu")])
    for impl in ("torch-seg-post-cuda", "torch-seg-post-masks-on-device-cuda"):
        t = find(recs, bench="frame", impl=impl, layout="yolov8_seg")
        if t:
            rows.append([impl, get(t, "dets"), mm(t, "gpu"), mm(t, "wall"),
                         "", "", "", mism(t)])
    if not rows:
        return None
    return table(["frame", "kept", "device GPU", "device wall", "host GPU",
                  "host wall", "CPU backend wall",
                  "same as CPU / mismatches"], rows)


def heads_targets(g):
    """The heads issue's targets: the YOLOv8-seg frame on the device with
    masks <= 60 us GPU time and >= 20x the PyTorch seg post-process (GPU
    time, masks to the host) of the same run; the YOLOv8-pose frame within
    10 % of the plain YOLOv8 frame."""
    out = []

    def verdict(ok):
        return "MET" if ok else "MISSED"

    dv = find(g, bench="frame", impl="cudanms-cuda", layout="yolov8_seg",
              input="device")
    t = find(g, bench="frame", impl="torch-seg-post-cuda",
             layout="yolov8_seg")
    gpu = measured(dv, "gpu_med_us")
    if gpu is None:
        out.append("NOT MEASURED: YOLOv8-seg frame with masks on the device "
                   "<= 60 us GPU time")
    else:
        out.append("%s: YOLOv8-seg frame (8400 anchors, 80 classes, 32x160x160"
                   " prototypes, %s kept) with masks on the device <= 60 us "
                   "GPU time: %s (min %s), %s wall" % (
                       verdict(gpu <= 60.0), get(dv, "dets"), us(gpu),
                       us(dv.get("gpu_min_us")), us(dv.get("wall_med_us"))))
        tg = measured(t, "gpu_med_us")
        if tg is None:
            out.append("NOT MEASURED: YOLOv8-seg frame >= 20x the PyTorch "
                       "seg post-process (no PyTorch figure)")
        else:
            out.append("%s: YOLOv8-seg frame >= 20x the PyTorch seg "
                       "post-process (ultralytics' process_mask, masks to "
                       "the host; GPU time): %.1fx (%s vs %s; wall %s)" % (
                           verdict(tg / gpu >= 20), tg / gpu, us(tg),
                           us(gpu), ratio_of(t, dv)))
    pd = find(g, bench="frame", impl="cudanms-cuda", layout="yolov8_pose",
              input="device")
    pv = find(g, bench="frame", impl="cudanms-cuda", layout="yolov8",
              input="device")
    pg, vg = measured(pd, "gpu_med_us"), measured(pv, "gpu_med_us")
    if pg is None or vg is None:
        out.append("NOT MEASURED: YOLOv8-pose frame within 10 % of the "
                   "YOLOv8 frame")
    else:
        out.append("%s: YOLOv8-pose frame (17 keypoints) on the device "
                   "within 10 %% of the YOLOv8 frame (GPU time): %s vs %s "
                   "(%+.1f %%; wall %s vs %s)" % (
                       verdict(pg <= 1.1 * vg), us(pg), us(vg),
                       100.0 * (pg / vg - 1.0), us(pd.get("wall_med_us")),
                       us(pv.get("wall_med_us"))))
    pb = find(g, bench="frame", impl="cudanms-cuda",
              layout="yolov8_pose_boxes", input="device")
    bg = measured(pb, "gpu_med_us")
    if pg is not None and bg is not None:
        out.append("(what the keypoints cost: the pose frame %s against its "
                   "boxes alone, the same one-class NMS, %s: %+.1f %% GPU "
                   "time; wall %s vs %s)" % (
                       us(pg), us(bg), 100.0 * (pg / bg - 1.0),
                       us(pd.get("wall_med_us")), us(pb.get("wall_med_us"))))
    return out


def tiles_table(recs, dev):
    """The tiles frame (bench-tiles and bench_torch.py --tiles): cudanms's
    call, its decode and its merge apart, beside the anchors of the same
    run (dev: "cuda" or "cpu"), each against its like (the post-process
    against the decode, a merge against the merge, end to end against
    the call; wall time)."""
    rows = []
    cu = find(recs, bench="tiles", impl="cudanms-" + dev)
    cp = find(recs, bench="tiles", impl="cudanms-cpu")
    for r, impl in ((cu, "cudanms-" + dev), (cp if dev == "cuda" else None,
                                               "cudanms-cpu")):
        if r is None:
            continue
        where = "device" if impl == "cudanms-cuda" else "CPU backend"
        rows.append(["cudanms tiles (decode + map + merge), %s" % where,
                     r.get("records"), r.get("dets"), mm(r, "gpu"),
                     mm(r, "wall"), "", "same as its merge" if not
                     r.get("mismatches") else "%d merge mismatches" %
                     r["mismatches"]])
        rows.append(["  decode alone (cnms_detect_batch, 33 slices)",
                     r.get("slice_dets"), "", mm(r, "decode_gpu"),
                     mm(r, "decode_wall"), "", ""])
        rows.append(["  merge alone (cnms_merge%s)" % (
            ": the kernel" if "merge_host_wall_med_us" in r else ""),
                     r.get("records"), r.get("dets"),
                     mm(r, "merge_gpu") if "merge_gpu_med_us" in r else "",
                     mm(r, "merge_wall"), "", ""])
        if "merge_host_wall_med_us" in r:
            rows.append(["  merge alone on the host (CNMS_TEST_HOST_MERGE)",
                         r.get("records"), r.get("dets"), "",
                         mm(r, "merge_host_wall"), "", ""])
    for impl, what, like in (
            ("ultralytics-nms-" + dev, "ultralytics' post-process of the "
             "slices", "decode_wall_med_us"),
            ("sahi-merge-numpy", "SAHI's merge (sahi_ref, NumPy)",
             "merge_wall_med_us"),
            ("ultralytics-sahi-" + dev, "ultralytics + SAHI's merge, end to "
             "end", "wall_med_us"),
            ("torchvision-batched_nms-merge-" + dev, "batched_nms merge "
             "(IoU, not SAHI's rule)", "merge_wall_med_us"),
            ("ultralytics-batched_nms-" + dev, "ultralytics + batched_nms, "
             "end to end", "wall_med_us")):
        t = find(recs, bench="tiles", impl=impl)
        if t is None:
            continue
        rows.append([what, t.get("records", ""), t.get("dets", ""),
                     mm(t, "gpu") if "gpu_med_us" in t else "",
                     mm(t, "wall"), ratio_of(t, {"wall_med_us": get(cu, like)}
                                             if cu else None),
                     mism(t) if "mismatch" in t or "error" in t else ""])
    if not rows:
        return None
    return table(["what", "records", "detections", "GPU", "wall",
                  "x cudanms (wall, its like)", "vs cudanms"], rows)


def tiles_targets(g, c):
    """The tiles issue's targets: a 3840x2160 frame as 32 slices of
    640x640 (overlap 0.2) and the whole frame, YOLOv8, on the device:
    decode + map + merge <= 60 us GPU time, and >= 100x SAHI's merge in
    the same run, judged twice: end to end (ultralytics' post-process of
    the slices, SAHI's assembly and merge, against cudanms's call: the
    anchor doing the call's job, as the other targets compare) and the
    merge alone (sahi_ref's merge against cnms_merge, the same records);
    wall time both, the anchor running on the host. cudanms's call
    against SAHI's merge alone and against the batched_nms anchors as an
    INFO line; the CPU run's figures as another."""
    out = []

    def verdict(ok):
        return "MET" if ok else "MISSED"

    what = ("tiles frame (3840x2160: 32 slices of 640x640, overlap 0.2, and "
            "the whole frame; YOLOv8) on the device")
    dv = find(g, bench="tiles", impl="cudanms-cuda")
    gpu = measured(dv, "gpu_med_us")
    if gpu is None:
        out.append("NOT MEASURED: %s: decode + map + merge <= 60 us GPU "
                   "time" % what)
    else:
        out.append("%s: %s: decode + map + merge <= 60 us GPU time: %s (min "
                   "%s; the slices' batch and the merge kernel), "
                   "%s wall (the merge alone %s), %s records -> %s "
                   "detections" % (
                       verdict(gpu <= 60.0), what, us(gpu),
                       us(dv.get("gpu_min_us")), us(dv.get("wall_med_us")),
                       us(dv.get("merge_wall_med_us")), dv.get("records"),
                       dv.get("dets")))
    sm = find(g, bench="tiles", impl="sahi-merge-numpy")
    sw = find(g, bench="tiles", impl="ultralytics-sahi-cuda")
    wall, mw = measured(dv), measured(dv, "merge_wall_med_us")
    agree = "" if sm is None or "mismatch" not in sm else \
        "; SAHI's rule vs %s: %s mismatches" % (sm.get("vs"), mism(sm))
    if wall is None or measured(sw) is None:
        out.append("NOT MEASURED: %s >= 100x SAHI's merge end to end (%s)"
                   % (what, "no cudanms figure" if wall is None else
                      "no figure of the SAHI anchor"))
    else:
        x = sw["wall_med_us"] / wall
        out.append("%s: %s >= 100x SAHI's merge end to end (ultralytics' "
                   "post-process of the slices on the device, SAHI's "
                   "assembly and merge by sahi_ref; wall) against cudanms's "
                   "call (wall): %.1fx (%s vs %s)%s" % (
                       verdict(x >= 100), what, x, us(sw["wall_med_us"]),
                       us(wall), agree))
    if mw is None or measured(sm) is None:
        out.append("NOT MEASURED: tiles frame: cnms_merge >= 100x SAHI's "
                   "merge alone (%s)" % ("no cudanms figure" if mw is None
                                         else "no SAHI merge figure"))
    else:
        x = sm["wall_med_us"] / mw
        out.append("%s: tiles frame: cnms_merge >= 100x SAHI's merge alone "
                   "(sahi_ref's merge, NumPy, of the same %s records; wall): "
                   "%.1fx (%s vs %s)%s" % (
                       verdict(x >= 100), dv.get("records"), x,
                       us(sm["wall_med_us"]), us(mw), agree))
    if wall is not None:
        infos = []
        for impl, label in (("sahi-merge-numpy", "SAHI's merge alone"),
                            ("torchvision-batched_nms-merge-cuda",
                             "the batched_nms merge alone"),
                            ("ultralytics-batched_nms-cuda",
                             "ultralytics + batched_nms end to end")):
            t = measured(find(g, bench="tiles", impl=impl))
            if t is not None:
                infos.append("%s %s, %.1fx" % (label, us(t), t / wall))
        if infos:
            out.append("INFO: tiles frame, cudanms's whole call (%s wall) "
                       "against: %s" % (us(wall), "; ".join(infos)))
    cp = find(c, bench="tiles", impl="cudanms-cpu")
    if measured(cp) is not None:
        line = ("INFO: CPU backend tiles frame: %s wall (decode %s, merge "
                "%s), on %s" % (us(cp["wall_med_us"]),
                                us(cp.get("decode_wall_med_us")),
                                us(cp.get("merge_wall_med_us")),
                                (find(c, bench="env") or {}).get("cpu", "?")))
        sc = measured(find(c, bench="tiles", impl="sahi-merge-numpy"))
        wc = measured(find(c, bench="tiles", impl="ultralytics-sahi-cpu"))
        if sc is not None:
            line += "; SAHI's merge %s: %.1fx the call, %.1fx cnms_merge" % (
                us(sc), sc / cp["wall_med_us"],
                sc / cp.get("merge_wall_med_us", float("nan")))
        if wc is not None:
            line += "; ultralytics + SAHI's merge end to end %s: %.1fx" % (
                us(wc), wc / cp["wall_med_us"])
        out.append(line)
    return out


def lanes_nms_table(recs, dev):
    """cnms_nms_lanes on bench-nms's lanes ("far": 200 pixels apart, all
    kept; "frame": crossing lanes in a 640-wide model), S = 72, distance
    50, beside cnms_nms and cnms_nms_rotated (class-agnostic, IoU 0.5) at
    the same N."""
    rows = []
    impl = "cudanms-cuda" if dev == "cuda" else "cudanms-cpu"
    for mode in ("far", "frame"):
        for n in SIZES:
            cu = find(recs, bench="nms_lanes", impl="cudanms-cuda",
                      mode=mode, n=n)
            cp = find(recs, bench="nms_lanes", impl="cudanms-cpu",
                      mode=mode, n=n)
            if not (cu or cp):
                continue
            bx = find(recs, bench="nms", impl=impl, mode="agnostic", n=n)
            ob = find(recs, bench="nms_rotated", impl=impl, mode="agnostic",
                      n=n)
            row = [n, mode, get(cu or cp, "kept")]
            if dev == "cuda":
                same = get(cu, "same_as_cpu")
                row += [mm(cu, "gpu"), mm(cu, "wall"),
                        "n/a" if same is None else ("yes" if same else "NO"),
                        mm(cp, "wall"), mm(bx, "gpu"), mm(ob, "gpu")]
            else:
                row += [mm(cp, "wall"), mm(bx, "wall"), mm(ob, "wall")]
            rows.append(row)
    if not rows:
        return None
    head = ["N", "lanes", "kept"]
    if dev == "cuda":
        head += ["cudanms GPU", "cudanms wall", "same as CPU",
                 "cudanms CPU backend wall", "boxes GPU (cnms_nms)",
                 "oriented boxes GPU (cnms_nms_rotated)"]
    else:
        head += ["cudanms CPU backend", "boxes (cnms_nms)",
                 "oriented boxes (cnms_nms_rotated)"]
    return table(head, rows)


def rotated_table(recs, dev):
    """cnms_nms_rotated against the PyTorch probiou Fast-NMS."""
    rows = []
    for mode in ("agnostic", "classes"):
        for n in SIZES:
            cu = find(recs, bench="nms_rotated", impl="cudanms-cuda",
                      mode=mode, n=n)
            cp = find(recs, bench="nms_rotated", impl="cudanms-cpu",
                      mode=mode, n=n)
            t = find(recs, bench="nms_rotated",
                     impl="torch-probiou-fastnms-" + dev, mode=mode, n=n)
            if not (cu or cp or t):
                continue
            row = [n, mode, get(cu or cp, "kept"),
                   "n/a" if measured(t, "kept") is None else t["kept"]]
            if dev == "cuda":
                row += [mm(cu, "gpu"), mm(cu, "wall"), mm(t, "gpu"),
                        mm(t, "wall"),
                        ratio(measured(t, "gpu_med_us"),
                              get(cu, "gpu_med_us")),
                        ratio_of(t, cu), mm(cp, "wall"), mism(t)]
            else:
                row += [mm(cp, "wall"), mm(t, "wall"), ratio_of(t, cp),
                        mism(t)]
            rows.append(row)
    head = ["N", "mode", "kept (cudanms)", "kept (PyTorch)"]
    if dev == "cuda":
        head += ["cudanms GPU", "cudanms wall", "PyTorch GPU", "PyTorch wall",
                 "GPU ratio", "wall ratio", "cudanms CPU backend wall",
                 "PyTorch vs cudanms mismatches"]
    else:
        head += ["cudanms CPU backend", "PyTorch CPU", "ratio",
                 "PyTorch vs cudanms mismatches"]
    return table(head, rows)


def element_table(recs):
    rows = []
    devices = []
    for r in recs:
        if r.get("bench") == "element" and r["device"] not in devices:
            devices.append(r["device"])
    for dev in devices:
        one = find(recs, bench="element", device=dev, instances=1)
        for r in recs:
            if r.get("bench") != "element" or r.get("device") != dev:
                continue
            if "error" in r:
                rows.append([dev, r["instances"], r["frames"], r["error"],
                             "", "", "", ""])
                continue
            total = "%.0f" % r["fps_total"]
            if r.get("rounds", 1) > 1:
                total += " (%d rounds: %.0f .. %.0f)" % (
                    r["rounds"], r["fps_total_lowest"],
                    r["fps_total_highest"])
            rows.append([dev, r["instances"], r["frames"], total,
                         "%.0f" % r["fps_instance_med"],
                         ratio(r["fps_total"], get(one, "fps_total")),
                         r.get("rois_per_frame", ""),
                         "%.1f us" % r["us_in_element"]
                         if "us_in_element" in r else "n/a"])
    head = ["device", "instances", "frames each", "frames/s total",
            "frames/s per instance (median)", "total vs 1 instance",
            "boxes per frame", "time in cudanms per frame"]
    note = ""
    for params, what in ((1, "with their \"detection\" structures"),
                         (0, "without (roi-params=false, :bare)")):
        meta = find(recs, bench="meta", roi_params=params)
        if meta:
            note += ("\nThe output stage alone: the %d ROI metas of one "
                     "frame %s take %s to attach and free (min %s)." % (
                         meta["boxes"], what, us(meta["med_us"]),
                         us(meta["min_us"])))
    meta = find(recs, bench="meta", meta="analytics")
    if meta:
        note += ("\nThe output stage alone: the %d boxes of one frame as "
                 "GstAnalyticsODMtds (attach-meta=analytics, :analytics) take "
                 "%s to attach and free (min %s)." % (
                     meta["boxes"], us(meta["med_us"]), us(meta["min_us"])))
    return table(head, rows) + (note + "\n" if note else "")


def memory_table(recs):
    rows = []
    for r in recs:
        if r.get("bench") == "memory":
            rows.append([r["impl"], r["case"], "%.2f MiB" % (
                r["device_bytes"] / 2**20), "%.2f MiB" % (
                r["pinned_bytes"] / 2**20), "%.2f MiB" % (
                r["host_bytes"] / 2**20)])
    return table(["backend", "after", "device", "pinned", "host"], rows)


def targets(g, c):
    """Lines 'MET/MISSED/NOT MEASURED: ...' for the GPU targets (the CUDA
    latency and GPU-resident pipeline issues, README "Performance") and
    the CPU backend's, each judged only where its anchor was measured in
    the same run."""
    out = []

    def verdict(ok):
        return "MET" if ok else "MISSED"

    # 1. plain NMS >= 10x torchvision at every N, both modes, both metrics
    for mode, tv, label in (("agnostic", "torchvision-nms-cuda", "nms"),
                            ("classes", "torchvision-batched_nms-cuda",
                             "batched_nms, 80 classes")):
        for metric, name in (("gpu_med_us", "GPU time"),
                             ("wall_med_us", "wall time")):
            pairs = []
            for n in SIZES:
                cu = find(g, bench="nms", impl="cudanms-cuda", mode=mode,
                          n=n)
                t = find(g, bench="nms", impl=tv, mode=mode, n=n)
                if get(cu, metric) and get(t, metric):
                    pairs.append((n, t[metric] / cu[metric]))
            what = "NMS >= 10x torchvision %s at every N (%s)" % (label,
                                                                  name)
            if len(pairs) < len(SIZES):
                out.append("NOT MEASURED: %s: %d of %d sizes have figures"
                           % (what, len(pairs), len(SIZES)))
                continue
            worst = min(pairs, key=lambda p: p[1])
            out.append("%s: %s: worst N=%d at %.1fx; %s" % (
                verdict(worst[1] >= 10), what, worst[0], worst[1],
                ", ".join("%d: %.1fx" % p for p in pairs)))

    # 2. frames, tensor on the device
    t = find(g, bench="frame", impl="torch-post-cuda", layout="yolov8")
    for layout, gpu_max, wall_max in (("yolov8", 20.0, 30.0),
                                      ("yolov5", 30.0, None)):
        dv = find(g, bench="frame", impl="cudanms-cuda", layout=layout,
                  input="device")
        what = "%s frame on the device <= %s GPU time%s" % (
            "YOLOv8" if layout == "yolov8" else "YOLOv5", us(gpu_max),
            ", <= %s wall" % us(wall_max) if wall_max else "")
        if get(dv, "gpu_med_us") is None:
            out.append("NOT MEASURED: %s" % what)
            continue
        ok = dv["gpu_med_us"] <= gpu_max and (
            wall_max is None or dv["wall_med_us"] <= wall_max)
        line = "%s: %s: %s GPU (min %s), %s wall" % (
            verdict(ok), what, us(dv["gpu_med_us"]), us(dv["gpu_min_us"]),
            us(dv["wall_med_us"]))
        if layout == "yolov8" and t:
            line += "; PyTorch post-process %s GPU, %s wall" % (
                mm(t, "gpu"), mm(t, "wall"))
        out.append(line)

    # 3. 8 contexts on 8 threads >= 6x one
    one = find(g, bench="threads", threads=1)
    eight = find(g, bench="threads", threads=8)
    if get(one, "frames_per_s") and get(eight, "frames_per_s"):
        x = eight["frames_per_s"] / one["frames_per_s"]
        out.append("%s: 8 contexts on 8 threads >= 6x one: %.2fx (%.0f vs "
                   "%.0f frames/s)" % (verdict(x >= 6), x,
                                       eight["frames_per_s"],
                                       one["frames_per_s"]))
    else:
        out.append("NOT MEASURED: 8 contexts on 8 threads >= 6x one")

    out += element_targets(g, "")
    out += cpu_targets(c)
    out += lane_targets(g, c)
    out += heads_targets(g)
    out += tiles_targets(g, c)
    return out


def element_targets(g, where):
    """The element's targets (device tensors; device=auto on host tensors)
    on the records g, each line ending in where."""
    out = []

    def verdict(ok):
        return "MET" if ok else "MISSED"

    for dev, what in (("cuda-device", "device tensors"),
                      ("cuda-device:bare", "device tensors, roi-params="
                       "false"),
                      ("cuda-device:analytics", "device tensors, attach-meta="
                       "analytics")):
        if dev.endswith("analytics") and not find(g, bench="element",
                                                  device=dev):
            continue
        one = find(g, bench="element", device=dev, instances=1)
        eight = find(g, bench="element", device=dev, instances=8)
        if get(one, "fps_total") is None:
            out.append("NOT MEASURED: element >= 20000 frames/s, %s" % what)
            continue
        out.append("%s: element >= 20000 frames/s, 1 instance, %s: %.0f%s" % (
            verdict(one["fps_total"] >= 20000), what, one["fps_total"],
            where))
        if get(eight, "fps_total") is None:
            out.append("NOT MEASURED: 8 instances >= 5x one, %s" % what)
        else:
            x = eight["fps_total"] / one["fps_total"]
            out.append("%s: 8 instances >= 5x one, %s, one shared CUDA "
                       "context: %.0f frames/s, %.2fx%s" % (
                           verdict(x >= 5), what, eight["fps_total"], x,
                           where))
    for dev, what in (("cuda-device:gpus", "device tensors"),
                      ("cuda-device:gpus:analytics", "device tensors, "
                       "attach-meta=analytics")):
        if not find(g, bench="element", device=dev):
            continue
        one = find(g, bench="element", device=dev, instances=1)
        many = [r for r in g if r.get("bench") == "element"
                and r.get("device") == dev and r.get("instances", 1) > 1
                and "fps_total" in r]
        if get(one, "fps_total") is None or not many:
            why = get(one, "error") or "no run on 2 or more GPUs"
            out.append("NOT MEASURED: one pipeline per GPU, N GPUs >= 0.9 x N "
                       "one GPU (2 GPUs: >= 1.9x), %s: %s%s" % (what, why,
                                                                 where))
            continue
        n = many[0]["instances"]
        want = 1.9 if n == 2 else 0.9 * n
        x = many[0]["fps_total"] / one["fps_total"]
        out.append("%s: one pipeline per GPU, %d GPUs >= %.1fx one GPU, %s: "
                   "%.0f vs %.0f frames/s, %.2fx%s" % (
                       verdict(x >= want), n, want, what,
                       many[0]["fps_total"], one["fps_total"], x, where))
    for params in (1, 0):
        meta = find(g, bench="meta", roi_params=params)
        if meta:
            out.append("INFO: the ROI metas of one frame (%d boxes, "
                       "roi-params=%s) take %s to attach and free: alone at "
                       "most %.0f frames/s%s" % (
                           meta["boxes"], "true" if params else "false",
                           us(meta["med_us"]), 1e6 / meta["med_us"], where))
    for k in (1, 8):
        au = find(g, bench="element", device="auto", instances=k)
        cp = find(g, bench="element", device="cpu", instances=k)
        if get(au, "fps_total") is None or get(cp, "fps_total") is None:
            out.append("NOT MEASURED: device=auto >= device=cpu, host "
                       "tensors, %d instance(s)" % k)
            continue
        out.append("%s: device=auto >= device=cpu, host tensors, %d "
                   "instance(s): %.0f vs %.0f frames/s (%.2fx)%s" % (
                       verdict(au["fps_total"] >= cp["fps_total"]), k,
                       au["fps_total"], cp["fps_total"],
                       au["fps_total"] / cp["fps_total"], where))
    return out


def cpu_targets(c):
    """The CPU backend's targets, each against its anchor in the same run;
    NOT MEASURED where the anchor (or cudanms's figure) is missing."""
    out = []
    where = (find(c, bench="env") or {}).get("cpu", "?")

    def verdict(ok):
        return "MET" if ok else "MISSED"

    if not c:
        return ["NOT MEASURED: CPU backend targets (no CPU run)"]
    # plain NMS: >= 10x torchvision CPU, faster than OpenCV, every N
    for mode, tv, label in (("agnostic", "torchvision-nms-cpu", "agnostic"),
                            ("classes", "torchvision-batched_nms-cpu",
                             "80 classes")):
        for anchor, impl, factor in (("torchvision CPU", tv, 10.0),
                                     ("OpenCV NMSBoxes",
                                      "opencv-nmsboxes-cpu", 1.0)):
            pairs, missing = [], []
            for n in SIZES:
                cp = measured(find(c, bench="nms", impl="cudanms-cpu",
                                   mode=mode, n=n))
                t = measured(find(c, bench="nms", impl=impl, mode=mode, n=n))
                if cp and t:
                    pairs.append((n, t / cp))
                else:
                    missing.append(n)
            name = ("CPU backend NMS (%s) >= %gx %s at every N" % (
                label, factor, anchor) if factor > 1 else
                "CPU backend NMS (%s) faster than %s at every N" % (
                    label, anchor))
            if missing:
                out.append("NOT MEASURED: %s: no figures at N = %s" % (
                    name, ", ".join(str(n) for n in missing)))
                continue
            worst = min(pairs, key=lambda p: p[1])
            out.append("%s: %s: worst N=%d at %.1fx; %s (on %s)" % (
                verdict(worst[1] >= factor if factor > 1 else worst[1] > 1),
                name, worst[0], worst[1],
                ", ".join("%d: %.1fx" % p for p in pairs), where))
    big = measured(find(c, bench="nms", impl="cudanms-cpu", mode="agnostic",
                        n=1000000))
    if big is None:
        out.append("NOT MEASURED: CPU backend NMS of 10^6 random boxes "
                   "(agnostic) < 1 s")
    else:
        out.append("%s: CPU backend NMS of 10^6 random boxes (agnostic) "
                   "< 1 s: %s (on %s)" % (verdict(big < 1e6), us(big), where))
    # frames: an absolute target, and faster than torchvision CPU
    for layout, limit in (("yolov8", 250.0), ("yolov5", 1000.0)):
        cp = find(c, bench="frame", impl="cudanms-cpu", layout=layout)
        tc = find(c, bench="frame", impl="torch-post-cpu", layout=layout)
        what = "CPU backend %s frame" % ("YOLOv8" if layout == "yolov8"
                                          else "YOLOv5")
        if measured(cp) is None:
            out.append("NOT MEASURED: %s <= %s" % (what, us(limit)))
            continue
        out.append("%s: %s <= %s: %s median (min %s), on %s" % (
            verdict(cp["wall_med_us"] <= limit), what, us(limit),
            us(cp["wall_med_us"]), us(cp["wall_min_us"]), where))
        if measured(tc) is None:
            out.append("NOT MEASURED: %s faster than torchvision CPU "
                       "(no torchvision figure)" % what)
        else:
            out.append("%s: %s faster than torchvision CPU: %s vs %s "
                       "(%.1fx)" % (
                           verdict(cp["wall_med_us"] < tc["wall_med_us"]),
                           what, us(cp["wall_med_us"]), mm(tc, "wall"),
                           tc["wall_med_us"] / cp["wall_med_us"]))
    return out


def plot(g, c, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: matplotlib missing, no plot", file=sys.stderr)
        return False
    recs, dev = (g, "cuda") if find(g, bench="nms") else (c, "cpu")
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True)
    series = [("cudanms-cuda", "gpu_med_us", "cudanms CUDA, GPU time",
               "C0", "-", "o"),
              ("cudanms-cuda", "wall_med_us", "cudanms CUDA, wall",
               "C0", "--", "o"),
              (None, "gpu_med_us", "torchvision %s, GPU time" % dev,
               "C1", "-", "s"),
              (None, "wall_med_us", "torchvision %s, wall" % dev,
               "C1", "--", "s"),
              ("cudanms-cpu", "wall_med_us", "cudanms CPU backend, wall",
               "C7", ":", "^")]
    for ax, mode, tv in zip(axes, ("agnostic", "classes"),
                            ("torchvision-nms-", "torchvision-batched_nms-")):
        for impl, metric, label, color, ls, mk in series:
            name = impl or tv + dev
            pts = [(n, get(find(recs, bench="nms", impl=name, mode=mode, n=n),
                           metric)) for n in SIZES]
            pts = [(n, v / 1000.0) for n, v in pts if v]
            if pts:
                ax.plot(*zip(*pts), ls=ls, color=color, marker=mk, ms=4,
                        label=label.replace("torchvision", "torchvision " + (
                            "nms" if mode == "agnostic" else "batched_nms")))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N boxes")
        ax.set_title("class-agnostic" if mode == "agnostic" else "80 classes")
        ax.grid(True, which="major", lw=0.4)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("latency, ms (median)")
    env = find(recs, bench="env") or {}
    fig.suptitle("NMS latency, IoU 0.5, random boxes: %s" % (
        env.get("gpu") or env.get("cpu") or ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", help="run-gpu.sh output directory")
    ap.add_argument("--cpu", help="run-cpu.sh output directory")
    ap.add_argument("--bundle", help="run-gpu.sh's bundle/ directory "
                    "(BUNDLE=...: the GStreamer 1.26 build's bench-element)")
    ap.add_argument("--md", help="write the Markdown here")
    ap.add_argument("--png", help="write the plot here")
    a = ap.parse_args()
    if len(sys.argv) == 1:
        a.gpu, a.cpu, a.bundle = (
            d if os.path.isdir(d) else None for d in (
                os.path.join(RESULTS, "data", "gpu"),
                os.path.join(RESULTS, "data", "cpu"),
                os.path.join(RESULTS, "data", "gpu", "bundle")))
        a.md = os.path.join(RESULTS, "results.md")
        a.png = os.path.join(RESULTS, "latency.png")
    gm, g = load(a.gpu)
    cm, c = load(a.cpu)
    bm, bn = load(a.bundle)
    md = ["## Benchmark results\n\n",
          "Medians, with the minimum in parentheses, over >= 100 timed iterations after a "
          "warm-up unless the JSON says fewer (CPU cases are time-bounded). "
          "Ratios are the other implementation's time over cudanms's, or "
          "frames/s over one instance's. GPU time: CUDA events around the "
          "work, from the upload of host inputs (cudanms) to the result in "
          "host memory (cudanms's kernel writes it there, torchvision's is "
          "copied); wall: to the result on the host. Mismatches: size of the "
          "symmetric difference of the kept sets against cudanms.\n\n"]
    if g:
        md.append(env_lines(gm, g, "GPU host"))
        md.append("NMS only (`cnms_nms` from host arrays vs torchvision on "
                  "device tensors):\n\n" + nms_table(g, "cuda") + "\n")
        lt = lanes_nms_table(g, "cuda")
        if lt:
            md.append("Lane NMS (`cnms_nms_lanes` from host arrays, S = 72, "
                      "distance 50; far: lanes 200 pixels apart over the "
                      "same rows, all kept; frame: crossing lanes in a "
                      "640-wide model), beside the boxes and the oriented "
                      "boxes at the same N (class-agnostic, IoU 0.5):\n\n"
                      + lt + "\n")
        md.append("YOLO frame, score 0.25, IoU 0.45, 80 classes, top 300 "
                  "(yolov8_obb: oriented boxes, 15 classes, 1024x1024, "
                  "21504 anchors; PyTorch: ultralytics' probiou Fast-NMS, "
                  "whose kept set differs by design):\n\n"
                  + frame_table_gpu(g) + "\n")
        lt = lanes_table(g, "cuda")
        if lt:
            md.append("Lanes: LaneATT frame, 1000 proposals, S = 72 "
                      "(`cnms_detect`, layout `laneatt`, score 0.5, distance "
                      "50, top_k 4, 640x360 model, 1280x720 frame; PyTorch: "
                      "the lane post-process written for the bench, pair "
                      "matrix on the device, greedy keep on the host):\n\n"
                      + lt + "\n")
        ht = heads_table(g)
        if ht:
            md.append("Pose and segmentation heads: the YOLOv8-seg frame "
                      "(`cnms_detect` with its prototypes, 8400 anchors, "
                      "80 classes, 32 coefficients, 160x160 prototypes, "
                      "masks on the host at return) and the YOLOv8-pose "
                      "frame (17 keypoints), 640x640, beside the plain "
                      "YOLOv8 frame; PyTorch: ultralytics' process_mask "
                      "written for the bench, the masks to the host or left "
                      "on the device:\n\n"
                      + ht + "\n")
        tt = tiles_table(g, "cuda")
        if tt:
            md.append("Tiles: a 3840x2160 frame as 32 slices of 640x640 "
                      "(SAHI's grid, overlap 0.2) and the whole frame, "
                      "YOLOv8 `[33, 84, 8400]` on the device "
                      "(`cnms_detect_tiles`, score 0.25, IoU 0.45, SAHI's "
                      "merge defaults: greedy NMM, IoS 0.5, each class "
                      "alone; GPU time: the slices' batch, the map and "
                      "merge on the host after it); the anchors: "
                      "ultralytics' post-process of the slices on the "
                      "device, SAHI's merge as `sahi_ref` writes it "
                      "(NumPy), and torchvision's `batched_nms` as the "
                      "merge:\n\n" + tt + "\n")
        if find(g, bench="nms_rotated"):
            md.append("Oriented NMS (`cnms_nms_rotated` from host arrays, "
                      "exact greedy on the polygon IoU, vs a PyTorch probiou "
                      "Fast-NMS on device tensors; the boxes of the NMS "
                      "table with an angle; IoU 0.5):\n\n"
                      + rotated_table(g, "cuda") + "\n")
        md.append("Element throughput, YOLOv8 frame (appsrc ! cudanms ! "
                  "fakesink with host tensors; cuda-device: appsrc ! "
                  "tensorinject memory=cuda ! cudanms device=auto ! fakesink, "
                  "the tensor in GstCudaMemory; the instances share one "
                  "CUDA context, :own gives each pipeline its own; time in "
                  "cudanms: from its sink pad to its src pad, the mean of the "
                  "instances):\n\n" + element_table(g)
                  + "\n")
        md.append("Memory held by one context:\n\n" + memory_table(g) + "\n")
    if bn:
        md.append("Element throughput, the same run, the build of "
                  "scripts/gpu-bundle.sh (%s: GStreamer %s, under its own "
                  "loader; `:analytics`: attach-meta=analytics, one "
                  "GstAnalyticsODMtd per box in one relation meta):\n\n" % (
                      bm.get("bundle", "?"), bm.get("gstreamer", "?"))
                  + element_table(bn) + "\n")
    if c:
        md.append(env_lines(cm, c, "CPU machine"))
        md.append("YOLO frame, CPU (yolov8_obb: oriented, 15 classes, "
                  "1024x1024; PyTorch: ultralytics' probiou Fast-NMS):\n\n"
                  + frame_table_cpu(c) + "\n")
        lt = lanes_table(c, "cpu")
        if lt:
            md.append("Lanes, CPU: LaneATT frame, 1000 proposals, S = 72 "
                      "(score 0.5, distance 50, top_k 4; PyTorch: the lane "
                      "post-process written for the bench):\n\n"
                      + lt + "\n")
        tt = tiles_table(c, "cpu")
        if tt:
            md.append("Tiles, CPU: the 3840x2160 frame's 32 slices and the "
                      "whole frame (`cnms_detect_tiles` on the CPU "
                      "backend; the anchors with torch on the CPU):\n\n"
                      + tt + "\n")
        md.append("NMS only, CPU:\n\n" + nms_table(c, "cpu") + "\n")
        lt = lanes_nms_table(c, "cpu")
        if lt:
            md.append("Lane NMS, CPU (`cnms_nms_lanes`, S = 72, distance 50; "
                      "far: lanes 200 pixels apart over the same rows, all "
                      "kept; frame: crossing lanes in a 640-wide model), "
                      "beside the boxes and the oriented boxes at the same "
                      "N (class-agnostic, IoU 0.5):\n\n" + lt + "\n")
        if find(c, bench="nms_rotated"):
            md.append("Oriented NMS, CPU (PyTorch probiou Fast-NMS up to "
                      "N = 4096):\n\n" + rotated_table(c, "cpu") + "\n")
        md.append("Element throughput, CPU:\n\n" + element_table(c) + "\n")
        md.append("Memory, CPU backend:\n\n" + memory_table(c) + "\n")
    tl = targets(g, c)
    if bn:
        tl += element_targets(bn, " (GStreamer %s)" % bm.get("gstreamer",
                                                              "?"))
    md.append("### Targets\n\n" + "".join("- %s\n" % t for t in tl))
    text = "".join(md)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    if a.png and (g or c) and plot(g, c, a.png):
        print("report: wrote %s (%d bytes)" % (a.png, os.path.getsize(a.png)))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/NAME/).
The seeds are committed; this is how they were made. Run from anywhere:

    /usr/bin/python3 tests/fuzz/make_seeds.py

npy: what numpy writes (every dtype cudanms reads, uint8 included, versions 1.0 to 3.0,
scalars, empty arrays) and a header that ends in a quoted key.
detect: the 24-byte header of fuzz_detect.c (see parse ()) with small
YOLOv8, YOLOv5, end2end and YOLOv8-OBB tensors in each value mode, both
dtypes, short and long sizes. nms: boxes on fuzz_nms.c's small grid, raw
floats, signed values; the same for oriented boxes (flag bit 7).
heads: the 24-byte header of fuzz_heads.c with small yolov8-pose tensors
(D 2 and 3, rows that D does not divide) and yolov8-seg tensors with their
prototypes (a wrong M, missing, of the other dtype, short, batch 2).
"""
import io
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def write(kind, name, data):
    d = os.path.join(HERE, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy_bytes(a, version=None):
    f = io.BytesIO()
    if version is None:
        np.save(f, a)
    else:
        np.lib.format.write_array(f, a, version=version)
    return f.getvalue()


def npy_seeds():
    rng = np.random.default_rng(1)
    write("npy", "f4-3x4", npy_bytes(rng.random((3, 4), np.float32)))
    write("npy", "f2-1x7x10", npy_bytes(
        rng.random((1, 7, 10)).astype(np.float16)))
    write("npy", "i4-5", npy_bytes(np.arange(5, dtype=np.int32)))
    write("npy", "u1-2x3", npy_bytes(np.arange(6, dtype=np.uint8)
                                     .reshape(2, 3)))
    write("npy", "i8-2x2", npy_bytes(np.arange(4, dtype=np.int64)
                                     .reshape(2, 2)))
    write("npy", "scalar", npy_bytes(np.float32(1.5)))
    write("npy", "empty", npy_bytes(np.zeros((1, 0, 6), np.float32)))
    write("npy", "v2", npy_bytes(np.ones(3, np.float32), (2, 0)))
    write("npy", "v3", npy_bytes(np.ones(2, np.float32), (3, 0)))
    write("npy", "f8", npy_bytes(np.ones(2, np.float64)))
    write("npy", "fortran", npy_bytes(np.asfortranarray(
        np.ones((2, 3), np.float32))))
    # a header that is a quoted key and nothing else (8 bytes)
    write("npy", "oob", b"\x93NUMPY\x01\x00\x08\x00{'descr'")
    hdr = b"{'descr': '<i4', 'shape': (7, 7), 'descr': '<f4', " \
        b"'fortran_order': False, 'shape': (1,)}\n"
    write("npy", "dup-keys", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr))
          + hdr + struct.pack("<f", 2.5))


def detect_header(f16=0, layout=0, agnostic=0, letterbox=0, size_mode=0,
                  n_dims=3, value_mode=0, dims=(1, 7, 10), thr=0.25, iou=0.45,
                  max_det=300, max_cand=100, model=(320, 240),
                  frame=(320, 240), obb=0):
    n_dims_code = {3: 0, 2: 3, 1: 5, 4: 6, 0: 7}[n_dims]
    flags = f16 | (layout << 1) | (agnostic << 3) | (letterbox << 4) \
        | (size_mode << 5)
    h = bytes([flags, n_dims_code | (value_mode << 3) | (obb << 5)])
    h += struct.pack("<3H", *dims)
    h += struct.pack("<H", int((thr + 0.5) * 32768))
    h += struct.pack("<H", int(iou * 65535))
    h += struct.pack("<H", (max_det - 1) % 512)
    h += struct.pack("<H", (max_cand - 1) % 1024)
    h += struct.pack("<2H", model[0] - 1, model[1] - 1)
    h += struct.pack("<2H", frame[0] - 1, frame[1] - 1)
    assert len(h) == 24
    return h


def detect_seeds():
    rng = np.random.default_rng(2)
    # value mode 1: bytes -> (b % 128) * 5 (boxes), mode 2: b / 255 (scores)
    v8 = rng.integers(0, 256, 7 * 10, dtype=np.uint8).tobytes()
    write("detect", "v8-mode1", detect_header(value_mode=1) + v8)
    write("detect", "v8-mode2", detect_header(value_mode=2, thr=0.1) + v8)
    write("detect", "v8-f16", detect_header(f16=1, value_mode=3,
                                            thr=-0.4) + v8)
    write("detect", "v8-raw", detect_header(value_mode=0) +
          np.concatenate([rng.random(40, np.float32) * 300,
                          rng.random(30, np.float32)]).tobytes())
    write("detect", "v5", detect_header(layout=1, dims=(1, 12, 8),
                                        value_mode=2, thr=0.05) +
          rng.integers(0, 256, 96, dtype=np.uint8).tobytes())
    write("detect", "e2e", detect_header(dims=(1, 5, 6), value_mode=3,
                                         letterbox=1, model=(640, 640),
                                         frame=(1280, 720)) +
          rng.integers(0, 256, 30, dtype=np.uint8).tobytes())
    write("detect", "e2e-empty", detect_header(dims=(1, 0, 6)))
    write("detect", "short", detect_header(size_mode=6, value_mode=1) + v8)
    write("detect", "long", detect_header(size_mode=7, value_mode=1) + v8)
    write("detect", "agnostic-cap", detect_header(agnostic=1, max_cand=3,
                                                  max_det=2, value_mode=1,
                                                  dims=(1, 6, 64)) +
          rng.integers(0, 256, 384, dtype=np.uint8).tobytes())
    write("detect", "2d", detect_header(n_dims=2, dims=(7, 10, 0),
                                        value_mode=1) + v8)
    write("detect", "huge-dim", detect_header(dims=(1, 0xfffc, 8)))
    # YOLOv8-OBB [1, 4+C+1, N]: C = 3 classes, the angle row last
    obb = rng.integers(0, 256, 8 * 12, dtype=np.uint8).tobytes()
    write("detect", "obb-mode1", detect_header(obb=1, value_mode=1,
                                               dims=(1, 8, 12)) + obb)
    write("detect", "obb-mode3", detect_header(obb=1, value_mode=3, thr=-0.4,
                                               dims=(1, 8, 12)) + obb)
    write("detect", "obb-f16", detect_header(obb=1, f16=1, value_mode=1,
                                             dims=(1, 8, 12)) + obb)
    # raw floats: clusters of turned boxes, scores in (0, 1), a stretch
    n = 24
    k = rng.integers(0, 4, n)
    cx = rng.uniform(40, 280, 4)[k] + rng.normal(0, 3, n)
    cy = rng.uniform(40, 200, 4)[k] + rng.normal(0, 3, n)
    w = rng.uniform(10, 80, 4)[k] * rng.uniform(0.9, 1.1, n)
    h = rng.uniform(10, 80, 4)[k] * rng.uniform(0.9, 1.1, n)
    ang = rng.uniform(-np.pi, np.pi, 4)[k] + rng.normal(0, 0.1, n)
    t = np.stack([cx, cy, w, h] + [rng.random(n) for _ in range(3)] + [ang])
    raw = t.astype(np.float32).tobytes()
    write("detect", "obb-raw", detect_header(obb=1, dims=(1, 8, n),
                                             thr=0.1, max_cand=1000) + raw)
    write("detect", "obb-raw-stretch", detect_header(
        obb=1, dims=(1, 8, n), thr=0.1, agnostic=1, model=(320, 240),
        frame=(1280, 720)) + raw)
    write("detect", "obb-raw-letterbox", detect_header(
        obb=1, dims=(1, 8, n), thr=0.1, letterbox=1, model=(320, 320),
        frame=(640, 360)) + raw)
    # looser clusters: overlaps of every size, near any threshold
    n = 48
    k = rng.integers(0, 3, n)
    t = np.stack([rng.uniform(60, 260, 3)[k] + rng.normal(0, 12, n),
                  rng.uniform(60, 180, 3)[k] + rng.normal(0, 12, n),
                  rng.uniform(20, 60, n), rng.uniform(20, 60, n)]
                 + [rng.random(n) for _ in range(3)]
                 + [rng.uniform(-np.pi, np.pi, n)])
    write("detect", "obb-raw-spread", detect_header(
        obb=1, dims=(1, 8, n), thr=0.05, iou=0.3, max_cand=1000)
        + t.astype(np.float32).tobytes())
    write("detect", "obb-short", detect_header(obb=1, size_mode=6,
                                               value_mode=1,
                                               dims=(1, 8, 12)) + obb)
    write("detect", "obb-one-row", detect_header(obb=1, value_mode=1,
                                                 dims=(1, 5, 12)) + obb)


def nms_seeds():
    rng = np.random.default_rng(3)
    # flags: bit 0 classes, bit 1 agnostic, bits 2+ mode; iou byte; max_det
    for mode in range(3):
        for flags in (0, 1, 3):
            body = rng.integers(0, 256, 6 * 24 if mode else 21 * 24,
                                dtype=np.uint8).tobytes()
            write("nms", "mode%d-flags%d" % (mode, flags),
                  bytes([flags | (mode << 2), 128, 0]) + body)
    boxes = []
    for x in range(0, 30, 3):
        boxes += [x, x % 7, x + 5, x % 7 + 5, (x * 37) % 8, x % 4]
    write("nms", "grid", bytes([1 | (1 << 2), 115, 5]) + bytes(boxes))
    # oriented boxes (flag bit 7): per box 4 coordinates, an angle, a score
    # and a class
    for mode in range(3):
        for flags in (0, 1, 3):
            body = rng.integers(0, 256, 7 * 24 if mode else 25 * 24,
                                dtype=np.uint8).tobytes()
            write("nms", "obb-mode%d-flags%d" % (mode, flags),
                  bytes([0x80 | flags | (mode << 2), 128, 0]) + body)
    boxes = []
    for x in range(0, 30, 3):
        boxes += [x, x % 7, 5 + x % 3, 5, x % 16, (x * 37) % 8, x % 4]
    write("nms", "obb-grid", bytes([0x80 | 1 | (1 << 2), 115, 5])
          + bytes(boxes))
    raw = []
    for i in range(20):
        b = [100 + 7 * (i % 4), 80 + 5 * (i % 3), 30 + i, 12 + (i % 5),
             0.3 * i]
        raw.append(struct.pack("<5ff", *b, (i * 0.37) % 1) + bytes([i % 3]))
    write("nms", "obb-raw", bytes([0x80 | 1, 100, 0]) + b"".join(raw))
    # lanes (flag bit 7, bits 2-6 >= 24; mode = that value % 3): byte 3
    # S - 2, then per proposal 5 + S values and a score
    for bits in (24, 25, 26):
        body = rng.integers(0, 256, 12 * 30 if bits % 3 else 4 * 12 * 30,
                            dtype=np.uint8).tobytes()
        write("nms", "lanes-mode%d" % (bits % 3),
              bytes([0x80 | (bits << 2), 60, 0, 4]) + body)
    lanes = []
    for i in range(12):
        # S = 6: logits, start_y row, start_x, length, 6 x on a grid
        lanes += [0, 0, i % 3, 0, 8 + i % 5] + [(i + k) % 16 for k in
                                                 range(6)] + [i * 11 % 8]
    write("nms", "lanes-grid", bytes([0x80 | (25 << 2), 40, 6, 4])
          + bytes(lanes))


def heads_header(f16=0, seg=0, letterbox=0, dsize=0, psize=0, other=0,
                 kd=0, two_d=0, protos3=0, mode=1, missing=0, batch2=0,
                 rows=11, n=10, m=2, hp=4, wp=4, thr=0.25, iou=0.45,
                 model=(32, 32), frame=(48, 40)):
    h = bytes([f16 | (seg << 1) | (letterbox << 2) | (dsize << 3)
               | (psize << 5) | (other << 7),
               kd | (two_d << 2) | (protos3 << 3) | (mode << 4)
               | (missing << 6) | (batch2 << 7)])
    h += struct.pack("<5H", rows, n, m, hp, wp)
    h += struct.pack("<H", int(thr * 65536))
    h += struct.pack("<H", int(iou * 65535))
    h += struct.pack("<2H", model[0] - 1, model[1] - 1)
    h += struct.pack("<2H", frame[0] - 1, frame[1] - 1)
    assert len(h) == 24
    return h


def heads_seeds():
    rng = np.random.default_rng(3)
    body = rng.integers(0, 256, 4096, dtype=np.uint8).tobytes()
    # pose: rows 5 + 2 * 3 (kd 3), 5 + 3 * 2 (kd 2), 12 (7: neither)
    write("heads", "pose-d3", heads_header(kd=2, rows=11) + body)
    write("heads", "pose-d2", heads_header(kd=1, rows=11, letterbox=1)
          + body)
    write("heads", "pose-default", heads_header(kd=0, rows=56, n=20, mode=0)
          + body)
    write("heads", "pose-f16", heads_header(f16=1, kd=2, rows=8, mode=3)
          + body)
    write("heads", "pose-bad-k", heads_header(kd=2, rows=12) + body)
    write("heads", "pose-bad-kd", heads_header(kd=3, rows=11) + body)
    write("heads", "pose-2d", heads_header(kd=2, rows=11, two_d=1) + body)
    # seg: rows 4 + C + M
    write("heads", "seg", heads_header(seg=1, rows=4 + 2 + 2, m=2) + body)
    write("heads", "seg-mode3", heads_header(seg=1, rows=4 + 1 + 3, m=3,
                                             mode=3, letterbox=1) + body)
    write("heads", "seg-f16", heads_header(seg=1, f16=1, rows=4 + 2 + 4,
                                           m=4, hp=5, wp=7) + body)
    write("heads", "seg-protos3", heads_header(seg=1, rows=8, m=2,
                                               protos3=1) + body)
    write("heads", "seg-wrong-m", heads_header(seg=1, rows=8, m=4) + body)
    write("heads", "seg-missing", heads_header(seg=1, rows=8, missing=1)
          + body)
    write("heads", "seg-other-dtype", heads_header(seg=1, rows=8, other=1)
          + body)
    write("heads", "seg-short", heads_header(seg=1, rows=8, psize=2) + body)
    write("heads", "seg-batch2", heads_header(seg=1, rows=8, batch2=1)
          + body)
    write("heads", "seg-odd", heads_header(seg=1, rows=4 + 3 + 5, m=5, hp=1,
                                           wp=9, model=(40, 24),
                                           frame=(64, 17)) + body)


def main():
    npy_seeds()
    detect_seeds()
    nms_seeds()
    heads_seeds()
    for kind in ("npy", "detect", "nms", "heads"):
        print(kind, len(os.listdir(os.path.join(HERE, "corpus", kind))),
              "seeds")


if __name__ == "__main__":
    main()

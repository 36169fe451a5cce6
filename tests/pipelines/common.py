"""Shared by the pipelines/ example tests: paths, running, checks.

Each test exits 77 (skip) when a system module it needs is missing.
"""
import json
import os
import struct
import subprocess
import sys

SRC = os.environ.get("CUDANMS_SOURCE_ROOT",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("CUDANMS_BUILD_ROOT", os.path.join(SRC, "build"))
PIPELINES = os.path.join(SRC, "pipelines")
PRINT = os.path.join(BUILD, "pipelines", "cudanms-print")
TOOL = os.path.join(BUILD, "kernels", "tool", "cudanms-tool")
LABELS = [line.strip() for line in
          open(os.path.join(PIPELINES, "coco.names"))]


def need(*modules):
    """Exits 77 unless every module imports (gi needs its foreign cairo)."""
    for m in modules:
        try:
            if m == "gi-cairo":
                import gi
                gi.require_foreign("cairo")
            else:
                __import__(m)
        except (ImportError, ValueError) as e:
            print("SKIP: no %s: %s" % (m, e))
            sys.exit(77)


def run(args, **kw):
    """Runs a command, returns (exit status, stdout); stderr passes."""
    p = subprocess.run(args, stdout=subprocess.PIPE, text=True, timeout=240,
                       **kw)
    return p.returncode, p.stdout


def _no_constant(name):
    raise ValueError("not JSON: %s" % name)


def strict_json(line):
    """line parsed as strict JSON: NaN, Infinity and -Infinity, which
    Python's json takes by default, are refused (ValueError)."""
    return json.loads(line, parse_constant=_no_constant)


def json_lines(text):
    """The JSON lines of text, each parsed strictly (strict_json)."""
    return [strict_json(line) for line in text.splitlines() if line.strip()]


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    return struct.unpack(">II", head[16:24])


def known_expected(k):
    """The known scene (pipelines/python/known_scene.py) on 640x480 video,
    worked out by hand: (x, y, w, h, label_id, confidence, x1, y1, x2, y2)."""
    dx = 16 * k
    return [
        (120 + dx, 60, 80, 200, 0, 0.875, 120 + dx, 60, 200 + dx, 260),
        (320 + dx, 192, 160, 96, 2, 0.75, 320 + dx, 192, 480 + dx, 288),
        (320 + dx, 192, 160, 96, 7, 0.5, 320 + dx, 192, 480 + dx, 288),
        (488, 96, 64, 48, 16, 0.375, 488, 96, 552, 144),
    ]


def check_frame(frame, pts, width, height, expected, producer, first_id=0):
    """One JSON frame (gvametaconvert layout) against expected tuples, in
    kept order, ids from first_id, each detection naming producer (the
    cudanms element's name); floats to the 6 decimals printed."""
    assert frame["timestamp"] == pts, (frame["timestamp"], pts)
    assert frame["resolution"] == {"width": width, "height": height}
    objs = frame["objects"]
    assert len(objs) == len(expected), (len(objs), len(expected))
    for i, (o, e) in enumerate(zip(objs, expected)):
        x, y, w, h, lid, conf, x1, y1, x2, y2 = e
        label = LABELS[lid]
        assert (o["region_id"], o["roi_type"], o["x"], o["y"], o["w"],
                o["h"]) == (first_id + i, label, x, y, w, h), (i, o, e)
        d = o["detection"]
        assert set(d) == {"bounding_box", "confidence", "label_id", "label",
                          "producer"}, (i, d)
        assert d["producer"] == producer, (i, d["producer"], producer)
        assert d["label_id"] == lid and d["label"] == label, (i, d)
        assert abs(d["confidence"] - conf) <= 1e-6, (i, d["confidence"], conf)
        want = {"x_min": x1 / width, "y_min": y1 / height,
                "x_max": x2 / width, "y_max": y2 / height}
        assert set(d["bounding_box"]) == set(want), d["bounding_box"]
        for key, v in want.items():
            assert abs(d["bounding_box"][key] - v) <= 1e-6, (i, key, d, v)

"""cudanms from Python (gi): attach a NumPy tensor, read the detections back.

Copy this module next to your app. It needs the system's gi (python3-gi,
gir1.2-gstreamer-1.0, gir1.2-gst-plugins-base-1.0) and numpy.

- attach_tensor(buf, array): the input contract. On GStreamer 1.22 gi cannot
  fill a GstCustomMeta, so the "CudanmsTensorMeta" structure travels in a
  GstProtectionMeta, which cudanms reads exactly like the custom meta.
- detections(buf, producer=None): the output contract, the buffer's ROI
  metas as dicts in DL Streamer gvametaconvert's object layout, each
  cudanms's in kept order; "producer" (in "detection") names the cudanms
  element that attached it (left out where the ROI names none), and
  producer= keeps only that element's.
- frame_json(...): one JSON line per frame, the layout cudanms-print --json
  prints too (strict JSON: a NaN or infinite number is null).
"""
import json
import math

import numpy as np
import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstVideo", "1.0")
from gi.repository import GLib, Gst, GstVideo  # noqa: E402

_DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float16): "float16"}


def attach_tensor(buf, array, tensor_id="detections"):
    """Attaches a float32/float16 array (e.g. YOLOv8 [1, 84, 8400]) to buf."""
    array = np.ascontiguousarray(array)
    s = Gst.Structure.new_empty("CudanmsTensorMeta")
    s.set_value("id", tensor_id)
    s.set_value("data-type", _DTYPES[array.dtype])
    s.set_value("dims", Gst.ValueArray([int(d) for d in array.shape]))
    s.set_value("dims-order", "row-major")
    # An empty array (an end2end model's [1, 0, 6]) gets a buffer without
    # memory: new_wrapped(b"") raises GStreamer-CRITICALs.
    data = array.tobytes()
    s.set_value("data", Gst.Buffer.new_wrapped(data) if data
                else Gst.Buffer.new())
    buf.add_protection_meta(s)


# ROI ids a buffer may skip before the id walk below stops looking
_MAX_ID_GAP = 65536


class _MetaIds:
    """The ids of a buffer's ROI metas in the order they were attached, read
    through GStreamer's C API (gi cannot iterate a buffer's metas): ctypes
    calls gst_buffer_iterate_meta_filtered on the buffer's pointer (what
    gi's hash() of a boxed object is) and reads each meta's id field.
    Checked once against gi; where anything differs, ids() gives None and
    the id walk is used instead."""

    _OFF_ID = 20    # GstMeta (flags, info: 16 bytes), roi_type (4), id

    def __init__(self):
        self.ok = False
        try:
            import ctypes
            lib = ctypes.CDLL("libgstreamer-1.0.so.0")
            f = lib.gst_buffer_iterate_meta_filtered
            f.restype = ctypes.c_void_p
            f.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                          ctypes.c_size_t]
            api = ctypes.CDLL("libgstvideo-1.0.so.0") \
                .gst_video_region_of_interest_meta_api_get_type
            api.restype = ctypes.c_size_t
            self._ctypes, self._iterate, self._api = ctypes, f, api()
            probe = Gst.Buffer.new()
            for rid in (7, 1 << 30):
                m = GstVideo.buffer_add_video_region_of_interest_meta(
                    probe, "probe", 0, 0, 1, 1)
                m.id = rid
            self.ok = True
            self.ok = self.ids(probe) == [7, 1 << 30]
        except Exception:       # no such library or symbol, ctypes errors
            self.ok = False

    def ids(self, buf):
        if not self.ok:
            return None
        c = self._ctypes
        state = c.c_void_p(None)
        out = []
        while True:
            m = self._iterate(hash(buf), c.byref(state), self._api)
            if not m:
                return out
            out.append(c.c_int.from_address(m + self._OFF_ID).value)


_meta_ids = None


def _rois(buf):
    """The buffer's ROI metas. Where the ids in attachment order can be read
    (_MetaIds), each id is looked up in that order: every cudanms's ROIs in
    kept order, a cudanms's ids being unique within the buffer. Else the
    ids are walked upward from 0, which finds the same ROIs since every
    cudanms numbers its ROIs from the largest id already there plus one
    (consecutive ids); that walk stops once it has found every ROI meta of
    the buffer, or after _MAX_ID_GAP ids without one (another element's
    ids far apart, or several of its ROIs sharing an id)."""
    global _meta_ids
    if _meta_ids is None:
        _meta_ids = _MetaIds()
    ids = _meta_ids.ids(buf)
    if ids is not None:
        rois, seen = [], set()
        for rid in ids:
            if rid not in seen:
                seen.add(rid)
                rois.append(GstVideo.buffer_get_video_region_of_interest_meta_id(
                    buf, rid))
        return rois
    n = buf.get_n_meta(GstVideo.VideoRegionOfInterestMeta.get_info().api)
    rois, rid, gap = [], 0, 0
    while len(rois) < n and gap < _MAX_ID_GAP:
        roi = GstVideo.buffer_get_video_region_of_interest_meta_id(buf, rid)
        if roi is None:
            gap += 1
        else:
            rois.append(roi)
            gap = 0
        rid += 1
    return rois


# The oriented box of an oriented detection: centre, size (frame pixels,
# not clipped) and angle (radians; the width side runs along (cos, sin),
# y down).
_OBB_FIELDS = ("cx", "cy", "width", "height", "angle")


def detections(buf, producer=None):
    """The detections on buf, each cudanms's in kept order; with producer
    (an element name), only that element's. ROIs without a "detection"
    structure (roi-params=false, or another element's) are left out. An
    oriented box's detection also holds "oriented_box": cx, cy, width,
    height, angle; a lane's (layout=laneatt) "lane": {"points": [[x, y],
    ...]} in frame pixels, bottom row first; a person's (layout=yolov8-pose)
    "keypoints": {"points": [[x, y, score], ...]} ([x, y] without scores);
    an instance's (layout=yolov8-seg) "mask": {"x", "y", "width",
    "height", "counts"}: its frame-pixel rectangle and its bytes row-major
    as runs alternately of 0s and 1s, 0s first (mask_bitmap() unpacks
    them)."""
    out = []
    for roi in _rois(buf):
        det = roi.get_param("detection")
        if det is None:
            continue
        who = det.get_value("producer") if det.has_field("producer") else None
        if producer is not None and who != producer:
            continue
        roi_type = GLib.quark_to_string(roi.roi_type)
        detection = {
            "bounding_box": {
                k: round(det.get_value(k), 6)
                for k in ("x_min", "y_min", "x_max", "y_max")},
            "confidence": round(det.get_value("confidence"), 6),
            "label_id": det.get_value("label_id"),
            "label": det.get_value("label") or roi_type,
        }
        if who is not None:
            detection["producer"] = who
        # an oriented box (layout=yolov8-obb): the ROI is its clipped hull
        if all(det.has_field(k) for k in _OBB_FIELDS):
            detection["oriented_box"] = {
                k: round(det.get_value(k), 6) for k in _OBB_FIELDS}
        # a lane (layout=laneatt): its points, frame pixels, bottom row
        # first; the ROI is their rectangle
        lane = roi.get_param("lane")
        if lane is not None and lane.has_field("points"):
            v = list(lane.get_value("points"))
            detection["lane"] = {"points": [
                [round(v[i], 6), round(v[i + 1], 6)]
                for i in range(0, len(v) - 1, 2)]}
        # a person (layout=yolov8-pose): its keypoints, frame pixels
        kps = roi.get_param("keypoints")
        if kps is not None and kps.has_field("points"):
            v = list(kps.get_value("points"))
            sc = list(kps.get_value("scores")) \
                if kps.has_field("scores") else None
            if sc is not None and len(sc) != len(v) // 2:
                sc = None
            detection["keypoints"] = {"points": [
                [round(v[2 * i], 6), round(v[2 * i + 1], 6)]
                + ([round(sc[i], 6)] if sc is not None else [])
                for i in range(len(v) // 2)]}
        # an instance (layout=yolov8-seg): its mask over its rectangle
        mask = roi.get_param("mask")
        if mask is not None and mask.has_field("data"):
            detection["mask"] = _mask_dict(mask)
        out.append({
            "region_id": roi.id,
            "roi_type": roi_type,
            "x": roi.x, "y": roi.y, "w": roi.w, "h": roi.h,
            "detection": detection,
        })
    return out


def _mask_dict(mask):
    data = mask.get_value("data")
    ok, info = data.map(Gst.MapFlags.READ)
    raw = bytes(info.data) if ok else b""
    if ok:
        data.unmap(info)
    counts, cur, run = [], 0, 0
    for b in raw:
        v = 1 if b else 0
        if v != cur:
            counts.append(run)
            cur, run = v, 0
        run += 1
    if run:
        counts.append(run)
    return {k: mask.get_value(k) for k in ("x", "y", "width", "height")} \
        | {"counts": counts}


def mask_bitmap(mask):
    """A detection's "mask" as a NumPy uint8 array [height, width] of 0s
    and 1s (its top left pixel at mask["x"], mask["y"] of the frame)."""
    import numpy as np
    flat = np.zeros(mask["width"] * mask["height"], np.uint8)
    pos, val = 0, 0
    for n in mask["counts"]:
        flat[pos:pos + n] = val
        pos, val = pos + n, 1 - val
    return flat.reshape(mask["height"], mask["width"])


def _finite(v):
    """v with every float that is NaN or infinite made None (JSON's null),
    through dicts, lists and tuples."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def frame_json(pts, width, height, objects):
    """One frame as a JSON line (gvametaconvert layout; timestamp in ns).
    A number that is NaN or infinite (a keypoint as the tensor had it) is
    null, as cudanms-print --json writes it: the line is strict JSON."""
    return json.dumps(_finite({
        "timestamp": pts if pts != Gst.CLOCK_TIME_NONE else 0,
        "resolution": {"width": width, "height": height},
        "objects": objects,
    }), separators=(",", ":"), allow_nan=False)


def frame_text(index, pts, objects):
    """The same lines cudanms-print prints without --json."""
    n = len(objects)
    lines = ["frame %-4d pts %s  %d detection%s" % (
        index, _time_str(pts), n, "" if n == 1 else "s")]
    # each ROI's producer, where the frame's ROIs have more than one
    several = len({o["detection"].get("producer") for o in objects}) > 1
    for o in objects:
        who = o["detection"].get("producer")
        obb = o["detection"].get("oriented_box")
        lines.append("  #%-3d %-14s %.3f  x=%-5u y=%-5u w=%-5u h=%-5u%s%s" % (
            o["region_id"], o["detection"]["label"],
            o["detection"]["confidence"], o["x"], o["y"], o["w"], o["h"],
            "  cx=%.1f cy=%.1f %.1fx%.1f angle=%.4f" % (
                obb["cx"], obb["cy"], obb["width"], obb["height"],
                obb["angle"]) if obb is not None else "",
            "  " + who if several and who is not None else ""))
    return "\n".join(lines)


def _time_str(t):
    if t == Gst.CLOCK_TIME_NONE:
        return "99:99:99.999999999"
    return "%u:%02u:%02u.%09u" % (t // (3600 * Gst.SECOND),
                                  t // (60 * Gst.SECOND) % 60,
                                  t // Gst.SECOND % 60, t % Gst.SECOND)

"""cudanms from Python (gi): attach a NumPy tensor, read the detections back.

Copy this module next to your app. It needs the system's gi (python3-gi,
gir1.2-gstreamer-1.0, gir1.2-gst-plugins-base-1.0) and numpy.

- attach_tensor(buf, array): the input contract. On GStreamer 1.22 gi cannot
  fill a GstCustomMeta, so the "CudanmsTensorMeta" structure travels in a
  GstProtectionMeta, which cudanms reads exactly like the custom meta.
- detections(buf): the output contract, cudanms's ROI metas in kept order
  (id 0..n-1), as dicts in DL Streamer gvametaconvert's object layout.
- frame_json(...): one JSON line per frame, the layout cudanms-print --json
  prints too.
"""
import json

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


def detections(buf):
    """cudanms's detections on buf, in kept order."""
    out = []
    while True:
        roi = GstVideo.buffer_get_video_region_of_interest_meta_id(
            buf, len(out))
        if roi is None:
            return out
        det = roi.get_param("detection")
        roi_type = GLib.quark_to_string(roi.roi_type)
        out.append({
            "region_id": roi.id,
            "roi_type": roi_type,
            "x": roi.x, "y": roi.y, "w": roi.w, "h": roi.h,
            "detection": {
                "bounding_box": {
                    k: round(det.get_value(k), 6)
                    for k in ("x_min", "y_min", "x_max", "y_max")},
                "confidence": round(det.get_value("confidence"), 6),
                "label_id": det.get_value("label_id"),
                "label": det.get_value("label") or roi_type,
            },
        })


def frame_json(pts, width, height, objects):
    """One frame as a JSON line (gvametaconvert layout; timestamp in ns)."""
    return json.dumps({
        "timestamp": pts if pts != Gst.CLOCK_TIME_NONE else 0,
        "resolution": {"width": width, "height": height},
        "objects": objects,
    }, separators=(",", ":"))


def frame_text(index, pts, objects):
    """The same lines cudanms-print prints without --json."""
    n = len(objects)
    lines = ["frame %-4d pts %s  %d detection%s" % (
        index, _time_str(pts), n, "" if n == 1 else "s")]
    for o in objects:
        lines.append("  #%-3d %-14s %.3f  x=%-5u y=%-5u w=%-5u h=%-5u" % (
            o["region_id"], o["detection"]["label"],
            o["detection"]["confidence"], o["x"], o["y"], o["w"], o["h"]))
    return "\n".join(lines)


def _time_str(t):
    if t == Gst.CLOCK_TIME_NONE:
        return "99:99:99.999999999"
    return "%u:%02u:%02u.%09u" % (t // (3600 * Gst.SECOND),
                                  t // (60 * Gst.SECOND) % 60,
                                  t // Gst.SECOND % 60, t % Gst.SECOND)

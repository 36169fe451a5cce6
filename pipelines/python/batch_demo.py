#!/usr/bin/python3
"""The batch demo (GStreamer >= 1.28): four streams of four frame sizes
batched, decoded by one cudanms, split again, each drawn on its own.

  videotestsrc ! tensorinject seed=1 draw-objects=true ! b.sink_0
  ... (4 streams: 1280x720, 960x540, 800x600, 640x480)
  tensorbatch name=b frames=2
    ! cudanms score-threshold=0.3 label-file=coco.names
    ! tensorunbatch name=u
  u.src_0 ! queue ! cairooverlay ! videoconvert ! pngenc ! multifilesink
  ... (one branch a stream)

tensorbatch (the stand-in for a batching muxer) gathers two frames of
every stream into one batch buffer (GstAnalyticsBatchMeta); cudanms
decodes every frame of the batch in one call and attaches each frame's ROI
metas to that frame's own buffer, sized by its stream's caps;
tensorunbatch (the stand-in for a splitter) sends each stream's frames out
of its own pad, where cairooverlay draws the kept boxes and labels as
overlay.py does. The streams have 12, 10, 8 and 6 frames: a stream that
ends leaves the batches. Writes, into --out:
  stream<i>-frame-00000.png ...   every annotated frame of stream i
  stream<i>-detections.jsonl      one JSON line a frame (cudanms-print
                                  --json layout)
  batch-contact-sheet.png         the middle frame of each stream, 2x2
No GPU and no model. Needs GST_PLUGIN_PATH_1_0 to hold the cudanms and
tensorinject plugins (built against GStreamer >= 1.28: tensorbatch and
tensorunbatch) and python3-gi-cairo. Exits 77 below GStreamer 1.28.
"""
import argparse
import os
import sys
import threading

import cairo
import gi

gi.require_foreign("cairo")
from cudanms_meta import Gst, GstVideo, detections, frame_json  # noqa: E402
from overlay import draw_detections  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = os.path.join(HERE, "..", "coco.names")
# (width, height, seed, frames) of each stream
STREAMS = [(1280, 720, 1, 12), (960, 540, 2, 10), (800, 600, 3, 8),
           (640, 480, 4, 6)]
# cudanms's properties, the batch run's and a single-stream run's
NMS = "iou=0.45 score-threshold=0.3 label-file=\"%s\"" % LABELS
CELL_W, CELL_H, GAP = 640, 360, 8


def source(i):
    """Stream i up to its tensors (a gst-launch description)."""
    w, h, seed, frames = STREAMS[i]
    return ("videotestsrc num-buffers=%d pattern=solid-color "
            "foreground-color=0xff1c2a38 "
            "! video/x-raw,format=BGRx,width=%d,height=%d,framerate=30/1 "
            "! tensorinject seed=%d draw-objects=true" % (frames, w, h, seed))


def single_description(i):
    """Stream i alone through cudanms (name nms), as cudanms-print runs
    it: the reference for the batch's stream i."""
    return "%s ! cudanms name=nms %s ! fakesink" % (source(i), NMS)


def description(out):
    desc = "tensorbatch name=b frames=2 ! cudanms name=nms %s " \
        "! tensorunbatch name=u" % NMS
    for i in range(len(STREAMS)):
        desc += (" %s ! b.sink_%d u.src_%d ! queue "
                 "! cairooverlay name=overlay%d ! videoconvert ! pngenc "
                 "! multifilesink sync=false location=\"%s\"" % (
                     source(i), i, i, i,
                     os.path.join(out, "stream%d-frame-%%05d.png" % i)))
    return desc


def contact_sheet(out, counts):
    """The middle frame of each stream, scaled into a CELL_W x CELL_H cell
    of a 2x2 grid, with its stream, size and frame."""
    sheet = cairo.ImageSurface(cairo.FORMAT_RGB24, 2 * CELL_W + 3 * GAP,
                               2 * CELL_H + 3 * GAP)
    cr = cairo.Context(sheet)
    cr.set_source_rgb(0.1, 0.1, 0.1)
    cr.paint()
    for i, (w, h, _seed, frames) in enumerate(STREAMS):
        k = frames // 2
        png = cairo.ImageSurface.create_from_png(
            os.path.join(out, "stream%d-frame-%05d.png" % (i, k)))
        scale = min(CELL_W / w, CELL_H / h)
        x = GAP + (i % 2) * (CELL_W + GAP) + (CELL_W - w * scale) / 2
        y = GAP + (i // 2) * (CELL_H + GAP) + (CELL_H - h * scale) / 2
        cr.save()
        cr.translate(x, y)
        cr.scale(scale, scale)
        cr.set_source_surface(png, 0, 0)
        cr.paint()
        cr.restore()
        # the caption on a dark band along the cell's bottom
        cr.set_source_rgba(0, 0, 0, 0.7)
        cr.rectangle(x, y + h * scale - 26, w * scale, 26)
        cr.fill()
        cr.set_source_rgb(1, 1, 1)
        cr.select_font_face("Sans", cairo.FONT_SLANT_NORMAL,
                            cairo.FONT_WEIGHT_BOLD)
        cr.set_font_size(14)
        cr.move_to(x + 6, y + h * scale - 8)
        cr.show_text("stream %d  %dx%d  frame %d/%d  %d detections" % (
            i, w, h, k, frames, counts[i][k]))
    path = os.path.join(out, "batch-contact-sheet.png")
    sheet.write_to_png(path)
    return path, sheet.get_width(), sheet.get_height()


def warm_up():
    """Reads the ROI of a buffer once in this thread: gi makes its wrapper
    classes (GstVideo.VideoRegionOfInterestMeta) lazily, and four streaming
    threads making them at once may get two classes, one of them refused
    ("Must be GstVideo.VideoRegionOfInterestMeta")."""
    buf = Gst.Buffer.new()
    roi = GstVideo.buffer_add_video_region_of_interest_meta(buf, "warm-up", 0,
                                                            0, 1, 1)
    roi.add_param(Gst.Structure.new_from_string(
        "detection, x_min=(double)0, y_min=(double)0, x_max=(double)1, "
        "y_max=(double)1, confidence=(double)1, label_id=(int)0, "
        "label=(string)warm-up"))
    assert len(detections(buf)) == 1


def run(out):
    os.makedirs(out, exist_ok=True)
    pipeline = Gst.parse_launch(description(out))
    jsonl = [open(os.path.join(out, "stream%d-detections.jsonl" % i), "w")
             for i in range(len(STREAMS))]
    counts = [[] for _ in STREAMS]
    lock = threading.Lock()     # the streams' probes read metas one at a time
    failed = []

    def on_buffer(_pad, info, i, pending):
        buf = info.get_buffer()
        try:
            with lock:
                objects = detections(buf)
        except Exception as e:  # noqa: BLE001 (reported after the run)
            failed.append("stream %d: %r" % (i, e))
            objects = []
        pending[buf.pts] = objects
        counts[i].append(len(objects))
        jsonl[i].write(frame_json(buf.pts, STREAMS[i][0], STREAMS[i][1],
                                  objects) + "\n")
        return Gst.PadProbeReturn.OK

    def on_draw(_overlay, cr, pts, _duration, i, pending):
        draw_detections(cr, pending.pop(pts, []), STREAMS[i][0])

    for i in range(len(STREAMS)):
        overlay = pipeline.get_by_name("overlay%d" % i)
        pending = {}
        overlay.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER,
                                                 on_buffer, i, pending)
        overlay.connect("draw", on_draw, i, pending)

    warm_up()
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(
        Gst.CLOCK_TIME_NONE, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    for f in jsonl:
        f.close()
    if msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        print("batch-demo: %s\n%s" % (err.message, dbg or ""),
              file=sys.stderr)
        return 1
    if failed:
        print("batch-demo: reading the detections failed: %s"
              % "; ".join(failed), file=sys.stderr)
        return 1
    for i, (w, h, _seed, frames) in enumerate(STREAMS):
        print("batch-demo: stream %d (%dx%d): %d frames, %d detections, "
              "%s, %s" % (
                  i, w, h, len(counts[i]), sum(counts[i]),
                  os.path.join(out, "stream%d-frame-*.png" % i),
                  os.path.join(out, "stream%d-detections.jsonl" % i)))
    path, w, h = contact_sheet(out, counts)
    print("batch-demo: contact sheet %s (%dx%d)" % (path, w, h))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="batch-demo-out")
    args = ap.parse_args()
    Gst.init(None)
    if Gst.version()[:2] < (1, 28) or \
            Gst.ElementFactory.find("tensorunbatch") is None:
        print("SKIP: the batch demo needs GStreamer >= 1.28 (GStreamer "
              "%d.%d here) and tensorbatch/tensorunbatch built against it"
              % Gst.version()[:2])
        return 77
    return run(args.out)


if __name__ == "__main__":
    sys.exit(main())

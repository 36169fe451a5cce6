#!/bin/sh
# The batch demo (GStreamer >= 1.28): four streams of four frame sizes
# (1280x720, 960x540, 800x600, 640x480; 12, 10, 8 and 6 frames), each a
# seeded tensorinject scene, gathered two frames a stream a batch by
# tensorbatch (GstAnalyticsBatchMeta), decoded by one cudanms
# (score-threshold 0.3, coco.names), split again by tensorunbatch, each
# stream's kept boxes and labels drawn on its own frames
# (python/batch_demo.py: cairooverlay, as overlay.py draws them), into
# OUT_DIR: stream<i>-frame-*.png, stream<i>-detections.jsonl (one JSON line
# a frame, cudanms-print --json's layout) and batch-contact-sheet.png.
# No GPU, no model. Exits 77 below GStreamer 1.28 (no batch meta).
#   sh pipelines/batch-demo.sh [BUILD_DIR] [OUT_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
out=${2:-batch-demo-out}
GST_PLUGIN_PATH_1_0="$build/gst${GST_PLUGIN_PATH_1_0:+:$GST_PLUGIN_PATH_1_0}"
export GST_PLUGIN_PATH_1_0
exec /usr/bin/python3 "$here/python/batch_demo.py" --out "$out"

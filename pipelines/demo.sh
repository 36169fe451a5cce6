#!/bin/sh
# The demo: synthetic YOLOv8 tensors from tensorinject (a seeded scene of
# moving objects, as a detector would see it) go through cudanms, and
# cudanms-print prints the detections of every frame. No GPU, no model.
#   sh pipelines/demo.sh [BUILD_DIR] [FRAMES]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
frames=${2:-10}
GST_PLUGIN_PATH_1_0="$build/gst${GST_PLUGIN_PATH_1_0:+:$GST_PLUGIN_PATH_1_0}"
export GST_PLUGIN_PATH_1_0
exec "$build/pipelines/cudanms-print" \
  videotestsrc num-buffers="$frames" pattern=ball \
  ! video/x-raw,width=1280,height=720,framerate=30/1 \
  ! tensorinject seed=7 \
  ! cudanms name=nms iou=0.45 score-threshold=0.25 label-file="$here/coco.names" \
  ! fakesink

#!/bin/sh
# Replay of saved tensors: tensorinject location=.../frame-%d.npy attaches
# frame k's .npy file (float32/float16, C order) to the k-th video buffer,
# and cudanms-print prints what cudanms keeps. Without NPY_DIR, it first
# writes three frames of a known YOLOv8 scene with numpy
# (python/known_scene.py: 4 detections per frame, listed there).
#   sh pipelines/replay.sh [--json] [BUILD_DIR] [NPY_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
json=
if [ "${1:-}" = --json ]; then json=--json; shift; fi
build=$(cd "${1:-$here/../build}" && pwd)
npy=${2:-}
if [ -z "$npy" ]; then
  npy=$(mktemp -d)
  trap 'rm -rf "$npy"' EXIT
  /usr/bin/python3 "$here/python/known_scene.py" "$npy" 3
fi
frames=$(find "$npy" -maxdepth 1 -name 'frame-*.npy' | wc -l)
GST_PLUGIN_PATH_1_0="$build/gst${GST_PLUGIN_PATH_1_0:+:$GST_PLUGIN_PATH_1_0}"
export GST_PLUGIN_PATH_1_0
"$build/pipelines/cudanms-print" $json \
  videotestsrc num-buffers="$frames" \
  ! video/x-raw,width=640,height=480,framerate=30/1 \
  ! tensorinject location="$npy/frame-%d.npy" \
  ! cudanms name=nms model-size=640x640 label-file="$here/coco.names" \
  ! fakesink

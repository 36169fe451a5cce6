#!/bin/sh
# The tiles demo: a 3840x2160 frame of 150 small objects (tensorinject
# slice-size=640x640 draw-objects=true), its 33 slices' tensors merged by
# cudanms slice-size=640x640 as SAHI merges them, beside one 640x640 pass
# of the whole frame (cudanms tensor-id=tiles-whole-frame), each drawn
# (python/tiles_demo.py: cairooverlay, as overlay.py draws them), into
# OUT_DIR: tiles.png, single.png, tiles-detections.json and
# tiles-contact-sheet.png. No GPU, no model.
#   sh pipelines/tiles-demo.sh [BUILD_DIR] [OUT_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
out=${2:-tiles-demo-out}
GST_PLUGIN_PATH_1_0="$build/gst${GST_PLUGIN_PATH_1_0:+:$GST_PLUGIN_PATH_1_0}"
export GST_PLUGIN_PATH_1_0
exec /usr/bin/python3 "$here/python/tiles_demo.py" --out "$out"

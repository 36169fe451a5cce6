#!/bin/sh
# One command: installs what is needed, builds, and runs the demo pipeline
# (synthetic YOLOv8 tensors -> cudanms -> printed detections). No GPU, no model.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup-debian.sh
sh scripts/build.sh
exec sh pipelines/demo.sh build

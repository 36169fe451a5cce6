#!/bin/sh
# One command: installs the build and runtime packages (setup-debian.sh demo;
# not the tests' torchvision/OpenCV), builds, and runs the demo pipeline
# (synthetic YOLOv8 tensors -> cudanms -> printed detections and annotated
# pictures). No GPU, no model.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup-debian.sh demo
sh scripts/build.sh
exec sh pipelines/demo.sh build

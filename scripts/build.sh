#!/bin/sh
# Configures (once) and builds cudanms into ./build.
set -eu
cd "$(dirname "$0")/.."
[ -d /usr/local/cuda/bin ] && PATH="$PATH:/usr/local/cuda/bin" && export PATH
if [ ! -f build/build.ninja ]; then
  meson setup build
fi
ninja -C build

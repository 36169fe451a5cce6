#!/bin/sh
# Installs what cudanms needs on Debian 12, for one of two purposes:
#   sh scripts/setup-debian.sh demo   build and run the element and the demo
#                                     (toolchain, GStreamer, gi, cairo, numpy)
#   sh scripts/setup-debian.sh test   the same, plus the tests' references:
#                                     torchvision (golden NMS), shapely
#                                     (oriented-box polygons) and OpenCV
#                                     (tests/bench/run-cpu.sh)
#   sh scripts/setup-debian.sh check  the same, plus the checking tools of
#                                     CI: clang with libFuzzer (fuzz
#                                     targets) and valgrind
# Idempotent: installs only what is missing; uses sudo when not root. The
# CUDA backend is built too when nvcc is on PATH (e.g. /usr/local/cuda/bin);
# it is optional and not installed here.
set -eu
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi

# Build: compiler, meson, GStreamer headers (gstreamer-check comes with
# libgstreamer1.0-dev; gst-cuda, the pipeline's CUDA context, with
# libgstreamer-plugins-bad1.0-dev). Run: the plugins and tools the pipelines use, and
# the system python's gi, GStreamer bindings, cairo (overlay.py) and numpy
# (pipelines/python/cudanms_meta.py).
DEMO_PKGS="meson ninja-build pkg-config gcc
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-tools
  python3-numpy python3-gi python3-gst-1.0 python3-gi-cairo
  gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0"
# Test references only: what the results are checked against.
TEST_PKGS="python3-torchvision python3-shapely python3-opencv"
# Checking tools: clang and libFuzzer (scripts/fuzz-test.sh), valgrind
# (tests/valgrind.sh). gcc's ASan and UBSan come with gcc.
CHECK_PKGS="clang libclang-rt-14-dev valgrind"

case "${1:-}" in
  demo) PKGS=$DEMO_PKGS ;;
  test) PKGS="$DEMO_PKGS $TEST_PKGS" ;;
  check) PKGS="$DEMO_PKGS $TEST_PKGS $CHECK_PKGS" ;;
  *)
    echo "usage: sh scripts/setup-debian.sh demo|test|check" >&2
    exit 2
    ;;
esac

missing=
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  $SUDO apt-get update -q
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
else
  echo "setup: the $1 packages are installed"
fi

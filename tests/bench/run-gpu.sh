#!/bin/sh
# The GPU-host part of the benchmarks: builds nothing.
#   usage: sh tests/bench/run-gpu.sh BUILD_DIR [OUT_DIR]
# OUT_DIR: default tests/bench/results/data/gpu.
# BUILD_DIR: a build made with `. .gpuhost/activate.sh && meson setup ...`.
# The Python steps use the host's own python3 (torch + torchvision, CUDA);
# only bench-element runs inside `. .gpuhost/activate.sh` (found at the
# repository root), in a subshell. Writes OUT_DIR/{meta,nms,frame,torch,
# tiles,tiles_cpu,torch_tiles,element}.json, nvidia-smi.txt, results.md and
# log.txt; inputs and keep lists go to $BENCH_WORK (default
# /tmp/cnms-bench), not to OUT_DIR.
# BUNDLE=gpu-bundle-trixie.tar.xz (scripts/gpu-bundle.sh) adds, in the same
# run, bench-element of the bundle's build (GStreamer 1.26, with
# attach-meta=analytics) under its own loader: OUT_DIR/bundle/.
set -u
B=${1:?usage: run-gpu.sh BUILD_DIR [OUT_DIR]}
S=$(cd "$(dirname "$0")" && pwd)
. "$S/common.sh"
O=${2:-$RESULTS/data/gpu}
ROOT=$(cd "$S/../.." && pwd)
PY=${PYTHON:-python3}
W=${BENCH_WORK:-/tmp/cnms-bench}
mkdir -p "$O" "$W/data" "$W/res"
B=$(cd "$B" && pwd)
O=$(cd "$O" && pwd)
# the C benches need libcudart even where ld.so.conf does not list it
CUDA_LIBS=/usr/local/cuda/lib64:/usr/local/cuda/lib
cbench () {
  env LD_LIBRARY_PATH="$CUDA_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
}
element () {
  cd "$ROOT" && . ./.gpuhost/activate.sh &&
    LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$CUDA_LIBS" \
    GST_PLUGIN_PATH_1_0="$B/gst" GST_REGISTRY_1_0="$W/registry.bin" \
    "$B/tests/bench/bench-element" "$W/data" "$O/element.json" \
    --devices cuda-device,cuda-device:bare,cuda,cpu,auto,cuda-device:gpus \
    --instances 1,8 \
    --frames 2000 \
    --rounds 5
}
bundle () {
  rm -rf "$W/bundle" && mkdir -p "$W/bundle" "$O/bundle" &&
    tar xJf "$BUNDLE" -C "$W/bundle" &&
    write_meta "$O/bundle/meta.json" gpu tests/bench/run-gpu.sh "$B" "$O" &&
    printf '{"bundle": "%s", "gstreamer": "%s"}\n' "$(basename "$BUNDLE")" \
      "$(head -1 "$W/bundle/gpu-bundle/build/VERSION")" > "$O/bundle/gst.json" &&
    "$PY" "$ROOT/scripts/gpu-bundle-run.py" "$W/bundle/gpu-bundle" run \
      tests/bench/bench-element "$W/data" "$O/bundle/element.json" \
      --devices cuda-device:analytics,cuda-device:bare,cuda-device,cuda,cpu:analytics,cpu,auto,cuda-device:gpus:analytics \
      --instances 1,8 --frames 2000 --rounds 5
}
write_meta "$O/meta.json" gpu tests/bench/run-gpu.sh "$@"
{
  nvidia-smi > "$O/nvidia-smi.txt" 2>&1
  head -12 "$O/nvidia-smi.txt"
  step "$PY" "$S/gen_data.py" "$W/data"
  step cbench "$B/tests/bench/bench-nms" "$W/data" "$O/nms.json" \
    --backend all --cpu-budget 1 --save-dir "$W/res"
  step cbench "$B/tests/bench/bench-frame" "$W/data" "$O/frame.json" \
    --backend all --save-dir "$W/res"
  step "$PY" "$S/bench_torch.py" "$W/data" "$O/torch.json" --device cuda \
    --budget 20 --cudanms-dir "$W/res"
  step cbench "$B/tests/bench/bench-tiles" "$W/data" "$O/tiles.json" \
    --backend cuda --save-dir "$W/res"
  step cbench "$B/tests/bench/bench-tiles" "$W/data" "$O/tiles_cpu.json" \
    --backend cpu --save-dir "$W/res"
  step "$PY" "$S/bench_torch.py" "$W/data" "$O/torch_tiles.json" \
    --device cuda --tiles --budget 20 --cudanms-dir "$W/res"
  echo "== bench-element (inside .gpuhost/activate.sh)"
  ( element ) || echo "run-gpu.sh: FAILED (rc $?): bench-element"
  if [ -n "${BUNDLE:-}" ]; then
    step bundle
    step "$PY" "$S/report.py" --gpu "$O" --bundle "$O/bundle" --md "$O/results.md"
  else
    step "$PY" "$S/report.py" --gpu "$O" --md "$O/results.md"
  fi
} 2>&1 | tee "$O/log.txt"
! grep -q ": FAILED (rc" "$O/log.txt"

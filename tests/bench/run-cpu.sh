#!/bin/sh
# The CPU part of the benchmarks, on the machine at hand (Debian 12: the
# system python3 with python3-torchvision and python3-opencv).
#   usage: sh tests/bench/run-cpu.sh BUILD_DIR [OUT_DIR]
# Writes OUT_DIR (default tests/bench/results/data/cpu)/{meta,nms,frame,
# torch,tiles,torch_tiles,element}.json, results.md and log.txt.
# Every case is timed for at least 1 s (--min-time), so that on a shared
# machine each median spans a window of its load, not a burst.
# Inputs and keep lists go to a scratch directory ($BENCH_WORK or mktemp).
set -u
B=${1:?usage: run-cpu.sh BUILD_DIR [OUT_DIR]}
S=$(cd "$(dirname "$0")" && pwd)
. "$S/common.sh"
O=${2:-$RESULTS/data/cpu}
PY=${PYTHON:-/usr/bin/python3}
W=${BENCH_WORK:-$(mktemp -d /tmp/cnms-bench-cpu.XXXXXX)}
mkdir -p "$O" "$W/data" "$W/res"
B=$(cd "$B" && pwd)
O=$(cd "$O" && pwd)
write_meta "$O/meta.json" cpu tests/bench/run-cpu.sh "$@"
{
  step "$PY" "$S/gen_data.py" "$W/data"
  step "$B/tests/bench/bench-nms" "$W/data" "$O/nms.json" --backend cpu \
    --cpu-budget 3 --min-time 1 --save-dir "$W/res"
  step "$B/tests/bench/bench-frame" "$W/data" "$O/frame.json" --backend cpu \
    --min-time 1 --save-dir "$W/res"
  step "$PY" "$S/bench_torch.py" "$W/data" "$O/torch.json" --device cpu \
    --opencv --budget 3 --min-time 1 --cudanms-dir "$W/res"
  step "$B/tests/bench/bench-tiles" "$W/data" "$O/tiles.json" --backend cpu \
    --save-dir "$W/res"
  step "$PY" "$S/bench_torch.py" "$W/data" "$O/torch_tiles.json" \
    --device cpu --tiles --budget 3 --min-time 1 --cudanms-dir "$W/res"
  step env GST_PLUGIN_PATH_1_0="$B/gst" GST_REGISTRY_1_0="$W/registry.bin" \
    "$B/tests/bench/bench-element" "$W/data" "$O/element.json" \
    --devices cpu --instances 1,2,8 --frames 2000
  step "$PY" "$S/report.py" --cpu "$O" --md "$O/results.md"
} 2>&1 | tee "$O/log.txt"
[ -n "${BENCH_WORK:-}" ] || rm -rf "$W"
! grep -q ": FAILED (rc" "$O/log.txt"

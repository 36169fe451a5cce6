#!/bin/sh
# The libFuzzer targets (tests/fuzz): clang with ASan and UBSan,
# -Dfuzz=enabled, in ./build-fuzz (or DIR). Each target replays its seed
# corpus, then fuzzes for FUZZ_SECONDS (default 60) as a meson test of
# suite 'fuzz'; a finding fails it and stays in DIR/tests/fuzz/work. The
# last line is "N passed, N failed, N skipped".
#
# usage: [FUZZ_SECONDS=S] sh scripts/fuzz-test.sh [DIR]
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build-fuzz}
sh scripts/setup-debian.sh check
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang meson setup "$dir" -Dcuda=disabled -Dfuzz=enabled \
    -Db_sanitize=address,undefined -Db_lundef=false
fi
ninja -C "$dir" tests/fuzz/fuzz-npy tests/fuzz/fuzz-detect tests/fuzz/fuzz-nms \
  tests/fuzz/fuzz-heads
rc=0
FUZZ_SECONDS=${FUZZ_SECONDS:-60} meson test -C "$dir" --no-rebuild \
  --suite fuzz --print-errorlogs --num-processes 2 --timeout-multiplier 10 \
  || rc=$?
/usr/bin/python3 scripts/test-summary.py "$dir/meson-logs/testlog.json"
exit $rc

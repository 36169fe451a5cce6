#!/bin/sh
# The whole test suite under AddressSanitizer (LeakSanitizer included) and
# UndefinedBehaviorSanitizer: gcc, -Dcuda=disabled, in ./build-asan (or
# DIR). Any report fails its test (UBSan halts on the first, float to int
# overflow checked too); the last line is "N passed, N failed, N skipped".
#
# usage: sh scripts/sanitize-test.sh [DIR]
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build-asan}
sh scripts/setup-debian.sh test
if [ ! -f "$dir/build.ninja" ]; then
  CC=gcc meson setup "$dir" -Dcuda=disabled -Db_sanitize=address,undefined \
    -Db_lundef=false \
    -Dc_args="-fsanitize=float-cast-overflow -fno-sanitize-recover=all"
fi
ninja -C "$dir"
rc=0
meson test -C "$dir" --print-errorlogs --num-processes 2 || rc=$?
reports=$(grep -c -E 'runtime error:|ERROR: (Address|Leak)Sanitizer' \
  "$dir/meson-logs/testlog.txt" || true)
echo "sanitizers: $reports reports in $dir/meson-logs/testlog.txt"
[ "$reports" -eq 0 ] || rc=1
/usr/bin/python3 scripts/test-summary.py "$dir/meson-logs/testlog.json"
exit $rc

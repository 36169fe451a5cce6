#!/bin/sh
# One command: installs the build and runtime packages and the tests'
# references (setup-debian.sh test: torchvision, OpenCV), builds, and runs
# every test.
# Ends with the line "N passed, N failed, N skipped".
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup-debian.sh test
sh scripts/build.sh
rc=0
meson test -C build --print-errorlogs --num-processes 2 || rc=$?
/usr/bin/python3 scripts/test-summary.py build/meson-logs/testlog.json
exit $rc

#!/bin/sh
# Runs the gst-check tests under valgrind memcheck and fails on any memory
# error or any definitely or indirectly lost block (possibly lost and
# still reachable blocks are GLib's and GStreamer's one-time allocations:
# type system, registry, quarks). Suppressions: GLib's own
# (/usr/share/glib-2.0/valgrind/glib.supp, libglib2.0-dev) and
# tests/gst.supp; Debian ships none for GStreamer.
#
# usage: sh tests/valgrind.sh BUILDDIR [TEST...]
#   TEST: a gst-check binary of BUILDDIR/tests/gst (test-gst-cudanms ...);
#   default: all of them. BUILDDIR is a plain build (not -Db_sanitize).
# Each check runs in its own forked process, as under meson; every process
# gets a leak summary, and the line per binary sums them.
set -u

build=${1:?usage: $0 BUILDDIR [TEST...]}
shift
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind: not installed (apt-get install valgrind)" >&2
  exit 2
fi
tests=${*:-$(find "$build/tests/gst" -maxdepth 1 -type f -perm -u+x \
  -name 'test-gst-*' -exec basename {} \; 2>/dev/null | sort)}
if [ -z "$tests" ]; then
  echo "valgrind: no gst-check binaries under $build/tests/gst" >&2
  exit 2
fi

supp="--suppressions=$here/gst.supp"
[ -f /usr/share/glib-2.0/valgrind/glib.supp ] &&
  supp="$supp --suppressions=/usr/share/glib-2.0/valgrind/glib.supp"
system=${GST_PLUGIN_SYSTEM_PATH_1_0:-$(pkg-config --variable=pluginsdir gstreamer-1.0)}
logdir=$(mktemp -d "${TMPDIR:-/tmp}/cnms-valgrind.XXXXXX")
status=0

for t in $tests; do
  log=$logdir/$t.log
  # the environment of tests/meson.build, a registry of its own
  env GST_PLUGIN_SYSTEM_PATH_1_0= \
    GST_PLUGIN_PATH_1_0="$build/gst:$system" \
    GST_REGISTRY_1_0="$logdir/$t.reg" \
    CUDANMS_SOURCE_ROOT="$here/.." CUDANMS_BUILD_ROOT="$build" \
    CK_DEFAULT_TIMEOUT=3000 \
    valgrind --tool=memcheck --leak-check=full \
    --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 \
    --num-callers=40 $supp "$build/tests/gst/$t" >"$log" 2>&1
  rc=$?
  procs=$(grep -c 'ERROR SUMMARY' "$log")
  definite=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$log" |
    tr -d , | awk '{s += $1} END {print s + 0}')
  indirect=$(sed -n 's/.*indirectly lost: \([0-9,]*\) bytes.*/\1/p' "$log" |
    tr -d , | awk '{s += $1} END {print s + 0}')
  errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$log" |
    tr -d , | awk '{s += $1} END {print s + 0}')
  checks=$(grep -E '^[0-9]+%: Checks' "$log" | tail -n 1)
  if [ $rc -eq 0 ] && [ "$definite" -eq 0 ] && [ "$indirect" -eq 0 ] &&
    [ "$errors" -eq 0 ]; then
    verdict=ok
  else
    verdict=FAILED
    status=1
  fi
  printf '%-24s %-6s %3d processes, definitely lost %d B, indirectly lost %d B, %d errors; %s\n' \
    "$t" "$verdict" "$procs" "$definite" "$indirect" "$errors" "$checks"
  if [ "$verdict" = FAILED ]; then
    echo "---- first reports of $log"
    grep -E -A25 'are definitely lost|are indirectly lost|Invalid|uninitialised|:[EF]:' \
      "$log" | head -n 80
    echo "----"
  fi
done
echo "valgrind logs: $logdir"
exit $status

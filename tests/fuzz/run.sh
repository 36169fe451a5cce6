#!/bin/sh
# Fuzzes each libFuzzer target for SECONDS (one process each, one after
# the other), starting from its committed seed corpus (read only: new
# inputs go to a scratch corpus), and prints one line per target.
# SECONDS 0 only replays the corpus; $FUZZ_SECONDS, when set, overrides
# SECONDS (how meson's suite 'fuzz' is given a time). Exits
# non-zero when a target finds a crash, a leak or a contract violation;
# the input that did it is left as WORK/TARGET-crash-* (or -leak-,
# -timeout-, -oom-) to reproduce with BUILDDIR/tests/fuzz/fuzz-TARGET FILE.
#
# usage: sh tests/fuzz/run.sh BUILDDIR SECONDS [TARGET...] (default: all)
#   BUILDDIR configured with CC=clang -Dfuzz=enabled
#   -Db_sanitize=address,undefined -Db_lundef=false
# WORK is $FUZZ_WORK, or a new folder under $TMPDIR.
set -u

build=${1:?usage: $0 BUILDDIR SECONDS [TARGET...]}
seconds=${2:?usage: $0 BUILDDIR SECONDS [TARGET...]}
seconds=${FUZZ_SECONDS:-$seconds}
shift 2
targets=${*:-npy detect nms heads}
here=$(cd "$(dirname "$0")" && pwd)
work=${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/cnms-fuzz.XXXXXX")}
mkdir -p "$work"

# every report is a failure; UBSan's too
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

status=0
for t in $targets; do
  exe=$build/tests/fuzz/fuzz-$t
  if [ ! -x "$exe" ]; then
    echo "fuzz: $exe not built (configure with -Dfuzz=enabled)" >&2
    exit 2
  fi
  mkdir -p "$work/$t-corpus"
  log=$work/$t.log
  if [ "$seconds" -gt 0 ]; then
    budget="-max_total_time=$seconds"
  else
    budget="-runs=0"
  fi
  "$exe" "$budget" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/$t-" \
    "$work/$t-corpus" "$here/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  found=$(ls "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-timeout-* \
    "$work/$t"-oom-* 2>/dev/null | wc -l)
  if [ $rc -eq 0 ] && [ "$found" -eq 0 ]; then
    verdict=ok
  else
    verdict=FAILED
    status=1
  fi
  printf 'fuzz-%-7s %-6s %ss, %s runs, coverage %s, %s findings\n' "$t" \
    "$verdict" "$seconds" "${runs:-?}" "${cov:-?}" "$found"
  if [ "$verdict" = FAILED ]; then
    echo "---- last lines of $log"
    tail -n 30 "$log"
    echo "----"
  fi
done
echo "fuzz logs and scratch corpora: $work"
exit $status

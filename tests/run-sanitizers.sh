#!/bin/sh
# Runs the gpu suite's test binaries under compute-sanitizer's memcheck
# (with leak check), racecheck and synccheck, prints each run's summary
# line, and exits non-zero on any error.
#
# usage: sh tests/run-sanitizers.sh BUILDDIR [TOOL...]
#
# The tests run with fewer cases than in `meson test` (sanitized kernels
# are 10-100x slower): CNMS_GPU_CASES, CNMS_GPU_REPEAT, CNMS_GPU_ROUNDS and
# CNMS_GPU_MIXED_ROUNDS (test-cuda-threads' mixed phase of an N = 32768
# case: CNMS_GPU_ROUNDS rounds here, 10x that in `meson test`) override
# that. CNMS_GPU_SANITIZER=1 makes the tests skip their
# deliberate CUDA failures (out of memory, bad device id), which the
# sanitizer would report as API errors, and makes test-cuda-threads
# smaller (CNMS_GPU_THREADS=2 threads, cases of at most CNMS_GPU_MAX_N=9000
# boxes or anchors), so that racecheck finishes. Each binary gets
# CNMS_SANITIZER_TIMEOUT seconds (default 900) per tool; one that runs
# over is a failure (TIMEOUT). COMPUTE_SANITIZER names the binary when it
# is not on PATH or in $CUDA_HOME/bin.
set -u

build=${1:?usage: $0 BUILDDIR [memcheck|racecheck|synccheck ...]}
shift
tools=${*:-memcheck racecheck synccheck}

cs=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer 2>/dev/null)}
[ -n "$cs" ] || cs=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
if [ ! -x "$cs" ]; then
  echo "run-sanitizers: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2
  exit 2
fi

tests=$(find "$build/tests/gpu" -maxdepth 1 -type f -name 'test-cuda-*' \
  -perm -u+x | sort)
if [ -z "$tests" ]; then
  echo "run-sanitizers: no gpu test binaries under $build/tests/gpu" \
    "(build with CUDA first: ninja -C $build)" >&2
  exit 2
fi

export CNMS_GPU_SANITIZER=1
export CNMS_GPU_CASES=${CNMS_GPU_CASES:-30}
export CNMS_GPU_REPEAT=${CNMS_GPU_REPEAT:-3}
export CNMS_GPU_ROUNDS=${CNMS_GPU_ROUNDS:-1}
export CNMS_GPU_MIXED_ROUNDS=${CNMS_GPU_MIXED_ROUNDS:-1}

logdir=$(mktemp -d "${TMPDIR:-/tmp}/cnms-sanitizers.XXXXXX")
status=0
for tool in $tools; do
  case $tool in
    memcheck) opts="--leak-check full" ;;
    racecheck) opts="--racecheck-report all" ;;
    synccheck) opts="" ;;
    *) echo "run-sanitizers: unknown tool $tool" >&2; exit 2 ;;
  esac
  failed=0
  for t in $tests; do
    name=$(basename "$t")
    log="$logdir/$tool-$name.log"
    # shellcheck disable=SC2086
    timeout "${CNMS_SANITIZER_TIMEOUT:-900}" \
      "$cs" --tool "$tool" $opts --error-exitcode 99 "$t" >"$log" 2>&1
    rc=$?
    summary=$(grep -E '(ERROR|RACECHECK|LEAK) SUMMARY' "$log" | tail -n 1 |
      sed 's/^=* *//')
    case $rc in
      0) verdict=ok ;;
      77) verdict=skipped; summary="(no CUDA device)" ;;
      124) verdict=TIMEOUT; failed=$((failed + 1)); status=1 ;;
      *) verdict=FAILED; failed=$((failed + 1)); status=1 ;;
    esac
    printf '%-9s %-26s %-7s %s\n' "$tool" "$name" "$verdict" "$summary"
    if [ "$verdict" = FAILED ] || [ "$verdict" = TIMEOUT ]; then
      echo "---- last lines of $log"
      tail -n 40 "$log"
      echo "----"
    fi
  done
  echo "$tool: $failed failing binaries"
done
echo "logs: $logdir"
exit $status

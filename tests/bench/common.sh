# Shared by run-gpu.sh and run-cpu.sh (sourced after setting S, the
# folder of the scripts).

# The benchmark outputs, apart from the code: a run's files in
# results/data/gpu and results/data/cpu (the runs' default OUT_DIR), the
# tables and plot of both in results/results.md and results/latency.png
# (report.py without arguments).
RESULTS=$S/results

# write_meta FILE KIND SCRIPT ARGS...: when, what and which commit ran
# (BENCH_COMMIT, where set, names the commit: a copied tree's git metadata
# can be older than its files).
write_meta () {
  _f=$1 _kind=$2
  shift 2
  printf '{"date": "%s", "command": "sh %s", "git": "%s", "host_kind": "%s"}\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" \
    "${BENCH_COMMIT:-$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo unknown)}" \
    "$_kind" > "$_f"
}

# step CMD...: runs it, prints a header, and a FAILED line on failure
# (the run goes on: the other parts still measure something).
step () {
  echo "== $*"
  "$@" || echo "$(basename "$0"): FAILED (rc $?): $*"
}

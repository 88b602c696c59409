#!/usr/bin/env bash
# Installs what is missing, then runs the test suite.
#
#   scripts/test.sh [swift test options…]          e.g. --filter RenderRouteTests
#   scripts/test.sh --sanitize=address [options…]  under AddressSanitizer with leak checking (LeakSanitizer), built
#                                                  into .build-asan, so the normal build stays as it is (the same
#                                                  build scripts/docs.sh and scripts/fuzz.sh then reuse)
#   scripts/test.sh --sanitize=thread [options…]   under ThreadSanitizer, built into .build-tsan
#
# Without --filter, each test target runs in a process of its own, one after another: on two cores the whole suite in
# one process let the CPU-heavy engine tests hold the threads every async test of that process needs (Swift's
# cooperative threads, one per core), and the service's deadlines then measured the wait for a thread, not the
# service. Each target's output goes to a log (.build/test-logs/, or the sanitizer's build folder); a failing
# target's failures are printed. Any sanitizer report fails the run; suppressions, each justified, are in
# scripts/sanitizers/. CI runs the whole suite under AddressSanitizer and the concurrency suites under
# ThreadSanitizer (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
source scripts/build-settings.sh
sanitizer=""
filtered=false
options=()
for argument in "$@"; do
  case "$argument" in
    --sanitize=*) sanitizer="${argument#--sanitize=}"; continue ;;
    --filter|--filter=*) filtered=true ;;
  esac
  options+=("$argument")
done
build_settings "$sanitizer"
if [ -z "$sanitizer" ]; then
  logs=".build/test-logs"
  if $filtered; then exec swift test "$@"; fi
  mkdir -p "$logs"
  if ! swift build --build-tests "$@" > "$logs/build.log" 2>&1; then
    grep -E "error" "$logs/build.log" | head -20
    echo "test.sh: the build failed (log: $logs/build.log)" >&2
    exit 1
  fi
  run=(swift test --skip-build "$@")
  label="passed"
else
  logs="$scratch"
  export SWIFT_BACKTRACE=enable=no       # the backtracer reads memory in ways the sanitizers report
  # An allocation's stack is kept 16 frames deep, not 30: enough to name where a leak or a freed block came from (and
  # for every suppression), and recording deeper async stacks at every allocation was a tenth of the suite's time.
  export ASAN_OPTIONS="detect_leaks=1:malloc_context_size=16"
  export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
  export TSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/tsan.supp:halt_on_error=0:second_deadlock_stack=1"
  mkdir -p "$scratch"
  build_started=$(date +%s)
  if ! swift build --build-tests "${build_flags[@]}" --scratch-path "$scratch" > "$scratch/build.log" 2>&1; then
    grep -E "error" "$scratch/build.log" | head -20
    echo "test.sh: the $sanitizer-sanitized build failed (log: $scratch/build.log)" >&2
    exit 1
  fi
  echo "test.sh: the $sanitizer-sanitized build took $(( $(date +%s) - build_started )) s"
  run=(swift test --skip-build "${build_flags[@]}" "${options[@]}" --scratch-path "$scratch")
  label="passed under $sanitizer sanitizer"
fi
# A target that has not ended within its limit is stopped (after the threads of its test process are printed, with
# gdb where it is installed, into TARGET.hang.txt beside its log) and named with the tests that had started and not
# ended, so that one hanging test fails its target instead of the whole run's time limit.
limit="${CHORUS_TEST_TARGET_LIMIT:-900}"
descendants() { local child; for child in $(pgrep -P "$1" || true); do echo "$child"; descendants "$child"; done; }
unfinished() {  # the tests (and suites) of Swift Testing's log that started and did not pass, fail or skip
  sed -nE 's/^[^[:alpha:]]*(Test|Suite) (.*) started\.$/\1 \2/p' "$1" | grep -v '^Test run$' | while IFS= read -r started; do
    grep -qF "$started passed" "$1" || grep -qF "$started failed" "$1" || grep -qF "$started skipped" "$1" || echo "$started"
  done
}
slowest() {  # the three slowest tests of a log, "name (N s)"
  grep -v 'Test run with' "$1" | sed -nE 's/^[^[:alpha:]]*Test (.*) (passed|failed) after ([0-9.]+) seconds.*$/\3\t\1/p' | sort -rn | head -3 |
    awk -F'\t' '{ printf "%s%s (%.0f s)", (NR > 1 ? ", " : ""), $2, $1 }'
}
# Runs `run` with the given options in the background, its output to $log, guarded by the limit; prints a line.
guarded() {
  local name="$1" log="$2"; shift 2
  local started; started=$(date +%s)
  "${run[@]}" "$@" > "$log" 2>&1 &
  local runner=$!
  while kill -0 "$runner" 2>/dev/null && (( $(date +%s) - started < limit )); do sleep 1; done
  local hung=false
  if kill -0 "$runner" 2>/dev/null; then
    hung=true
    local processes; processes=$(descendants "$runner")
    for process in $processes; do
      if command -v gdb > /dev/null; then
        timeout 120 gdb -p "$process" -batch -ex "thread apply all bt 24" >> "$log.hang.txt" 2>&1 || true
      fi
    done
    kill -KILL $processes "$runner" 2>/dev/null || true
  fi
  if wait "$runner" && ! $hung; then
    echo "$name: $label ($(( $(date +%s) - started )) s, $(grep -oE "with [0-9]+ tests?" "$log" | tail -1 | grep -oE "[0-9]+") tests; slowest: $(slowest "$log"))"
    return 0
  fi
  if $hung; then
    echo "$name: FAILED: still running after $limit s, stopped; log: $log, threads: $log.hang.txt"
    unfinished "$log" | head -20 | sed 's/^/  not ended: /' || true
  else
    echo "$name: FAILED ($(( $(date +%s) - started )) s); log: $log"
  fi
  grep -E "✘|ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|SUMMARY:|error:" "$log" | head -20 | sed 's/^/  /' || true
  return 1
}
if $filtered; then  # a sanitizer's run of the tests the options name
  guarded "$sanitizer sanitizer, $(printf '%s ' "${options[@]}")" "$logs/filtered-$(date +%s).log"
  exit
fi
status=0
for target in $(ls Tests | grep 'Tests$'); do
  guarded "$target" "$logs/$target.log" --filter "$target" || status=1
done
exit $status

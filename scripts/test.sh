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
  export ASAN_OPTIONS="detect_leaks=1"
  export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
  export TSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/tsan.supp:halt_on_error=0:second_deadlock_stack=1"
  mkdir -p "$scratch"
  if ! swift build --build-tests "${build_flags[@]}" --scratch-path "$scratch" > "$scratch/build.log" 2>&1; then
    grep -E "error" "$scratch/build.log" | head -20
    echo "test.sh: the $sanitizer-sanitized build failed (log: $scratch/build.log)" >&2
    exit 1
  fi
  if $filtered; then
    exec swift test --skip-build "${build_flags[@]}" "${options[@]}" --scratch-path "$scratch"
  fi
  run=(swift test --skip-build "${build_flags[@]}" "${options[@]}" --scratch-path "$scratch")
  label="passed under $sanitizer sanitizer"
fi
status=0
for target in $(ls Tests | grep 'Tests$'); do
  started=$(date +%s)
  if "${run[@]}" --filter "$target" > "$logs/$target.log" 2>&1; then
    echo "$target: $label ($(( $(date +%s) - started )) s, $(grep -oE "with [0-9]+ tests?" "$logs/$target.log" | tail -1 | grep -oE "[0-9]+") tests)"
  else
    status=1
    echo "$target: FAILED ($(( $(date +%s) - started )) s); log: $logs/$target.log"
    grep -E "✘|ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|SUMMARY:|error:" "$logs/$target.log" | head -20 | sed 's/^/  /' || true
  fi
done
exit $status

#!/usr/bin/env bash
# Installs what is missing, then runs the test suite.
#
#   scripts/test.sh [swift test options…]          e.g. --filter RenderRouteTests
#   scripts/test.sh --sanitize=address [options…]  under AddressSanitizer with leak checking (LeakSanitizer), built
#                                                  into .build-asan, so the normal build stays as it is
#   scripts/test.sh --sanitize=thread [options…]   under ThreadSanitizer, built into .build-tsan
#
# Under a sanitizer without --filter, the test targets run one after another: sanitized code is 2-10x slower, and
# the whole suite at once starves the live-service tests of the CPU their deadlines assume. Any sanitizer report
# fails the run; suppressions, each justified, are in scripts/sanitizers/. CI runs the whole suite under
# AddressSanitizer and the concurrency suites under ThreadSanitizer (README, docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
sanitizer=""
filtered=false
for argument in "$@"; do
  case "$argument" in
    --sanitize=*) sanitizer="${argument#--sanitize=}" ;;
    --filter|--filter=*) filtered=true ;;
  esac
done
if [ -z "$sanitizer" ]; then
  exec swift test "$@"
fi
scratch=".build-${sanitizer:0:1}san"   # .build-asan, .build-tsan
export SWIFT_BACKTRACE=enable=no       # the backtracer reads memory in ways the sanitizers report
export ASAN_OPTIONS="detect_leaks=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
export TSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/tsan.supp:halt_on_error=0:second_deadlock_stack=1"
mkdir -p "$scratch"
if ! swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" > "$scratch/build.log" 2>&1; then
  grep -E "error" "$scratch/build.log" | head -20
  echo "test.sh: the $sanitizer-sanitized build failed (log: $scratch/build.log)" >&2
  exit 1
fi
if $filtered; then
  exec swift test --skip-build "$@" --scratch-path "$scratch"
fi
status=0
for target in $(ls Tests | grep 'Tests$'); do
  started=$(date +%s)
  if swift test --skip-build "$@" --scratch-path "$scratch" --filter "$target" > "$scratch/$target.log" 2>&1; then
    echo "$target: passed under $sanitizer sanitizer ($(( $(date +%s) - started )) s)"
  else
    status=1
    echo "$target: FAILED under $sanitizer sanitizer ($(( $(date +%s) - started )) s); log: $scratch/$target.log"
    grep -E "✘|ERROR: (Address|Leak|Thread)Sanitizer|WARNING: ThreadSanitizer|SUMMARY:" "$scratch/$target.log" | head -20 | sed 's/^/  /' || true
  fi
done
exit $status

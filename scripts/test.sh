#!/usr/bin/env bash
# Installs what is missing, then runs the test suite.
#
#   scripts/test.sh [swift test options…]          e.g. --filter RenderRouteTests
#   scripts/test.sh --sanitize=address [options…]  under AddressSanitizer with leak checking (LeakSanitizer),
#                                                  built into .build-asan, so the normal build stays as it is
#   scripts/test.sh --sanitize=thread [options…]   under ThreadSanitizer, built into .build-tsan
#
# Sanitizer reports fail the run (suppressions, each justified: scripts/sanitizers/). CI runs the suite under
# AddressSanitizer and the concurrency suites under ThreadSanitizer (README, docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
arguments=("$@")
for argument in "$@"; do
  case "$argument" in
    --sanitize=*)
      sanitizer="${argument#--sanitize=}"
      arguments+=(--scratch-path ".build-${sanitizer:0:1}san")   # .build-asan, .build-tsan
      export SWIFT_BACKTRACE=enable=no   # the backtracer reads memory in ways the sanitizers report
      export ASAN_OPTIONS="detect_leaks=1"
      export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
      export TSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/tsan.supp:halt_on_error=0"
      ;;
  esac
done
swift test "${arguments[@]}"

#!/usr/bin/env bash
# Coverage-guided fuzzing of the engine and the service's request decoding (libFuzzer + AddressSanitizer).
#
#   scripts/fuzz.sh [SECONDS=60] [TARGET…]      targets: decode conversation request waveform mp3tag multipart (default: all)
#
# Builds `chorus-fuzz` with -sanitize=fuzzer,address into .build-fuzz, then runs each target for SECONDS
# starting from the committed seed corpus (Fuzz/corpus/TARGET) and the regression inputs
# (Fuzz/regressions/TARGET); new coverage goes to .build-fuzz/corpus/TARGET. A crash, leak, out-of-memory
# (2 GB) or hang (10 s per input) fails the script; its input is in .build-fuzz/findings/TARGET — add it to
# Fuzz/regressions/TARGET with the fix, and the tests replay it from then on. One summary line per target.
# FUZZ_SEED fixes libFuzzer's seed (CI sets it, so a run is the same sequence of inputs every time).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(decode conversation request waveform mp3tag multipart)
scratch=.build-fuzz
swift build --scratch-path "$scratch" --product chorus-fuzz -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING 2>&1 \
  | grep -E "error|Compiling chorus|Build" || true
binary="$scratch/debug/chorus-fuzz"
[ -x "$binary" ] || { echo "fuzz.sh: the fuzz build failed" >&2; exit 1; }
export SWIFT_BACKTRACE=enable=no   # the backtracer reads its own stack in ways ASan reports
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
status=0
for target in "${targets[@]}"; do
  # Not "artifacts": SwiftPM owns <scratch>/artifacts (binary targets) and empties it whenever it builds.
  mkdir -p "$scratch/corpus/$target" "$scratch/findings/$target" "Fuzz/regressions/$target"   # git keeps no empty folder
  log="$scratch/$target.log"
  set +e
  CHORUS_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 ${FUZZ_SEED:+-seed=$FUZZ_SEED} -artifact_prefix="$scratch/findings/$target/" \
    "$scratch/corpus/$target" "Fuzz/corpus/$target" "Fuzz/regressions/$target" >"$log" 2>&1
  code=$?
  set -e
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" || true)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
  corpus=$(ls -A "$scratch/corpus/$target" 2>/dev/null | wc -l || true)
  findings=$(ls -A "$scratch/findings/$target" 2>/dev/null | wc -l || true)
  echo "$target: ${seconds} s, ${runs:-?} executions, coverage ${cov:-?} edges, corpus $corpus new inputs, exit $code, findings $findings"
  if [ "$code" != 0 ]; then
    status=1
    grep -E "ERROR|SUMMARY|Fatal error|fuzz invariant|Test unit written" "$log" | head -8 | sed 's/^/  /'  || true
  fi
done
exit $status

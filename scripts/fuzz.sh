#!/usr/bin/env bash
# Coverage-guided fuzzing of the engine and the service's request decoding (libFuzzer + AddressSanitizer).
#
#   scripts/fuzz.sh [SECONDS=60] [TARGET…]      targets: decode conversation request waveform mp3tag multipart ssml model (default: all)
#
# Links `chorus-fuzz` of the AddressSanitizer build (.build-asan, the one `scripts/test.sh --sanitize=address`
# builds, with libFuzzer's coverage instrumentation: scripts/build-settings.sh) with the toolchain's libFuzzer, so no
# second build of the packages; then runs each target for SECONDS starting from the committed seed corpus
# (Fuzz/corpus/TARGET) and the regression inputs (Fuzz/regressions/TARGET); new coverage goes to
# .build-asan/fuzz/corpus/TARGET. A crash, leak, out-of-memory (2 GB) or hang (10 s per input) fails the script; its
# input is in .build-asan/fuzz/findings/TARGET — add it to Fuzz/regressions/TARGET with the fix, and the tests replay
# it from then on. One summary line per target, in the order given. FUZZ_SEED fixes libFuzzer's seed (CI sets it, so a run is the same
# sequence of inputs every time).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(decode conversation request waveform mp3tag multipart ssml model)
source scripts/build-settings.sh
build_settings address
# libFuzzer without its `main`: chorus-fuzz finds LLVMFuzzerRunDriver by name, so it is kept and exported.
libfuzzer="$(ls "$(dirname "$(command -v swiftc)")"/../lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-"$(uname -m)".a 2>/dev/null | head -1)"
[ -f "$libfuzzer" ] || { echo "fuzz.sh: the toolchain has no libclang_rt.fuzzer_no_main for $(uname -m)" >&2; exit 1; }
mkdir -p "$scratch/fuzz"
if ! swift build --scratch-path "$scratch" "${build_flags[@]}" --product chorus-fuzz \
     -Xlinker --undefined=LLVMFuzzerRunDriver -Xlinker --export-dynamic-symbol=LLVMFuzzerRunDriver \
     -Xlinker "$libfuzzer" -Xlinker -lstdc++ > "$scratch/fuzz/build.log" 2>&1; then
  grep -E "error" "$scratch/fuzz/build.log" | head -20 >&2
  echo "fuzz.sh: the fuzz build failed (log: $scratch/fuzz/build.log)" >&2
  exit 1
fi
binary="$scratch/debug/chorus-fuzz"
export SWIFT_BACKTRACE=enable=no   # the backtracer reads its own stack in ways ASan reports
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
# One target per core at a time (FUZZ_JOBS to change it): each libFuzzer process is single-threaded, so on two cores
# the eight targets take half the time, each still its SECONDS.
jobs="${FUZZ_JOBS:-$(nproc)}"
fuzz_target() {  # runs one target; its summary line (and what failed) into its .summary; its exit status
  local target="$1"
  # Not <scratch>/artifacts: SwiftPM owns that folder (binary targets) and empties it whenever it builds.
  local corpus="$scratch/fuzz/corpus/$target" findings="$scratch/fuzz/findings/$target"
  local log="$scratch/fuzz/$target.log" summary="$scratch/fuzz/$target.summary"
  rm -f "$summary"   # a run that dies before its line must not show an earlier run's
  mkdir -p "$corpus" "$findings" "Fuzz/regressions/$target"   # git keeps no empty folder
  local code=0
  CHORUS_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 ${FUZZ_SEED:+-seed=$FUZZ_SEED} -artifact_prefix="$findings/" \
    "$corpus" "Fuzz/corpus/$target" "Fuzz/regressions/$target" >"$log" 2>&1 || code=$?
  local runs cov added found
  runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" || true)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
  added=$(ls -A "$corpus" 2>/dev/null | wc -l || true)
  found=$(ls -A "$findings" 2>/dev/null | wc -l || true)
  echo "$target: ${seconds} s, ${runs:-?} executions, coverage ${cov:-?} edges, corpus $added new inputs, exit $code, findings $found" > "$summary"
  if [ "$code" != 0 ]; then
    grep -E "ERROR|SUMMARY|Fatal error|fuzz invariant|Test unit written" "$log" | head -8 | sed 's/^/  /' >> "$summary" || true
  fi
  return "$code"
}
status=0
running=0
for target in "${targets[@]}"; do
  if (( running >= jobs )); then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_target "$target" &
  running=$((running + 1))
done
while (( running > 0 )); do
  wait -n || status=1
  running=$((running - 1))
done
for target in "${targets[@]}"; do cat "$scratch/fuzz/$target.summary"; done
exit $status

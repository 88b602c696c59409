# Sourced by scripts/test.sh, docs.sh and fuzz.sh: the one description of each build they share, so that the three
# reuse one build instead of compiling the packages again.
#
#   build_settings ""|address|thread    sets `scratch` (the build folder) and `build_flags` (for swift build/test/package)
#
# address: AddressSanitizer, and libFuzzer's coverage instrumentation (edges, comparisons, 8-bit counters, PC table),
# so that scripts/fuzz.sh links this build's `chorus-fuzz` with libFuzzer instead of building everything again with
# -sanitize=fuzzer (whose libFuzzer `main` no test runner can link beside its own). Without libFuzzer the
# instrumentation's hooks are the sanitizer runtime's empty defaults. (The index store stays: on Linux, SwiftPM
# discovers the tests through it; --disable-index-store fails the test build.)
build_settings() {
  case "$1" in
    "") scratch=".build"; build_flags=() ;;
    address) scratch=".build-asan"
             build_flags=(--sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table) ;;
    thread) scratch=".build-tsan"; build_flags=(--sanitize=thread) ;;
    *) echo "build_settings: no sanitizer '$1' (address or thread)" >&2; return 1 ;;
  esac
}

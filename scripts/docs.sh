#!/usr/bin/env bash
# Builds the DocC documentation of the libraries apps and programs use — ChorusAudio, ChorusVoices, ChorusClient —
# into .build/plugins/Swift-DocC/outputs/<target>.doccarchive, and fails on any DocC warning (a broken symbol link, an
# undocumented parameter of a documented function, …). CI runs it (.ci/run).
#
#   scripts/docs.sh                 all three
#   scripts/docs.sh ChorusClient    one
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(ChorusAudio ChorusVoices ChorusClient); fi
status=0
for target in "${targets[@]}"; do
  log=".build/docs-$target.log"
  mkdir -p .build
  if ! swift package generate-documentation --target "$target" > "$log" 2>&1; then
    echo "docs.sh: $target: the documentation did not build (log: $log)" >&2
    tail -20 "$log" >&2
    status=1
    continue
  fi
  # DocC's own diagnostics only: SwiftPM's about third-party packages (swift-distributed-tracing's unhandled file) are not ours.
  warnings=$(sed -n '/^Building documentation for/,$p' "$log" | grep -cE "^(warning|error):" || true)
  if [ "$warnings" -gt 0 ]; then
    echo "docs.sh: $target: $warnings DocC warning(s):" >&2
    sed -n '/^Building documentation for/,$p' "$log" | grep -A4 -E "^(warning|error):" >&2
    status=1
  else
    echo "$target: documentation built, no warnings"
  fi
done
exit $status

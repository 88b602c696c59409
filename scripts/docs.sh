#!/usr/bin/env bash
# Builds the DocC documentation of the libraries apps and programs use — ChorusAudio, ChorusText, ChorusSpeech,
# ChorusListening, ChorusConversation, ChorusClient —
# into <build folder>/docs/<target>.doccarchive, and fails on any DocC warning (a broken symbol link, an undocumented
# parameter of a documented function, …). CI runs it on the AddressSanitizer build the tests used (.ci/run), so the
# documentation costs no build of its own: the symbol graphs come from `swift package dump-symbol-graph` on that build,
# the archives from the toolchain's `docc`, with the settings of `swift package generate-documentation`
# (public symbols, extension blocks).
#
#   scripts/docs.sh [--sanitize=address] [TARGET…]    all six by default; the normal build (.build) without --sanitize
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build-settings.sh
sanitizer=""
targets=()
for argument in "$@"; do
  case "$argument" in
    --sanitize=*) sanitizer="${argument#--sanitize=}" ;;
    *) targets+=("$argument") ;;
  esac
done
build_settings "$sanitizer"
if [ ${#targets[@]} -eq 0 ]; then targets=(ChorusAudio ChorusText ChorusSpeech ChorusListening ChorusConversation ChorusClient); fi
mkdir -p "$scratch/docs"
log="$scratch/docs/symbol-graphs.log"
if ! swift package --scratch-path "$scratch" "${build_flags[@]}" dump-symbol-graph \
     --minimum-access-level public --emit-extension-block-symbols > "$log" 2>&1; then
  grep -E "error" "$log" | head -20 >&2
  echo "docs.sh: the symbol graphs were not built (log: $log)" >&2
  exit 1
fi
graphs="$(sed -n 's/^Files written to //p' "$log" | tail -1)"
[ -d "$graphs" ] || { echo "docs.sh: dump-symbol-graph named no folder (log: $log)" >&2; exit 1; }
status=0
for target in "${targets[@]}"; do
  # The target's own graph and its extensions of other modules' types (Target@Other), nothing of its dependencies.
  input="$scratch/docs/$target.symbolgraphs"
  rm -rf "$input" && mkdir -p "$input"
  cp "$graphs/$target.symbols.json" "$input/"
  cp "$graphs/$target"@*.symbols.json "$input/" 2>/dev/null || true
  log="$scratch/docs/$target.log"
  if ! docc convert "Sources/$target/$target.docc" --additional-symbol-graph-dir "$input" \
       --fallback-display-name "$target" --fallback-bundle-identifier "$target" \
       --output-path "$scratch/docs/$target.doccarchive" > "$log" 2>&1; then
    echo "docs.sh: $target: the documentation did not build (log: $log)" >&2
    tail -20 "$log" >&2
    status=1
    continue
  fi
  warnings=$(grep -cE "^(warning|error):" "$log" || true)
  if [ "$warnings" -gt 0 ]; then
    echo "docs.sh: $target: $warnings DocC warning(s):" >&2
    grep -A4 -E "^(warning|error):" "$log" >&2
    status=1
  else
    echo "$target: documentation built, no warnings ($scratch/docs/$target.doccarchive)"
  fi
done
exit $status

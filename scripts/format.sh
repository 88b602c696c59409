#!/usr/bin/env bash
# The one formatter: swift-format (the toolchain's), configured once in .swift-format (4 spaces, 150 columns, the lint
# rules the code follows). CI runs the check first; run it without arguments before committing.
#   scripts/format.sh           format Sources, Tests and Fuzz in place
#   scripts/format.sh --check   fail, naming each place, where formatting would change something or a rule is broken
set -euo pipefail
cd "$(dirname "$0")/.."
folders=(Sources Tests Fuzz)
if [ "${1:-}" = "--check" ]; then
  if ! swift format lint --strict --configuration .swift-format --recursive --parallel "${folders[@]}"; then
    echo "format.sh: the code is not formatted as .swift-format says: run scripts/format.sh" >&2
    exit 1
  fi
else
  swift format --in-place --configuration .swift-format --recursive --parallel "${folders[@]}"
fi

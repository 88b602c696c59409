#!/usr/bin/env bash
# Installs what is missing, then runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --test
swift test "$@"

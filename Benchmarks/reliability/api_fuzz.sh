#!/usr/bin/env bash
# Attacks a running `chorus serve` from its own /openapi.json with schemathesis (PyPI): every route,
# with a valid key, examples + coverage + fuzzing + stateful phases, every check. Prints the summary
# and keeps the JUnit/NDJSON reports; `docs/reliability.md` quotes the figures.
#
#   Benchmarks/reliability/api_fuzz.sh [SECONDS=600] [SEED=1]
#
# Needs: a built `chorus` (debug is enough: the point is behaviour, not speed), python3 with pip.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-600}"
seed="${2:-1}"
export PATH="$HOME/.local/bin:$PATH"
if ! command -v st >/dev/null; then
    python3 -m pip install --user --quiet schemathesis 2>/dev/null || python3 -m pip install --user --quiet --break-system-packages schemathesis
fi
swift build --product chorus >/dev/null
chorus="$(swift build --show-bin-path)/chorus"
work="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
key="fuzz-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
CHORUS_API_KEYS="$key" "$chorus" serve --port "$port" --data-dir "$work/data" --rate-limit 0 >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done

set +e
cd "$work"   # schemathesis keeps its cache in the working directory
st run "http://127.0.0.1:$port/openapi.json" -H "Authorization: Bearer $key" --checks all --max-examples 25 -w 2 \
    --request-timeout 60 --max-time "$seconds" --seed "$seed" --report junit,ndjson --report-dir "$work/report" >"$work/st.log" 2>&1
set -e
cd - >/dev/null
sed -n '/SUMMARY/,$p' "$work/st.log"
echo
echo "server responses by status:"
grep -o '"status":"[0-9]*"' "$work/serve.log" | sort | uniq -c
echo "5xx other than 502/503: $(grep -o '"status":"5[0-9][0-9]"' "$work/serve.log" | grep -vc '"50[23]"' || true)"
echo "server still answering: $(curl -fs "http://127.0.0.1:$port/health" || echo NO)"
echo "key in the server log: $(grep -c "$key" "$work/serve.log" || true)"
echo "full output: $work/st.log; reports: $work/report"

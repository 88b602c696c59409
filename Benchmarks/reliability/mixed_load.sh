#!/usr/bin/env bash
# A mixed workload against `chorus serve` for DURATION seconds (default 300): wrk reading random byte
# ranges of a stored render at 16 connections, while a loop submits new espeak renders (each a fresh text,
# so each really renders) one after another. Samples the service's RSS and open file descriptors every
# 10 s and prints them with wrk's figures and the renders' outcomes; docs/reliability.md quotes them.
#
#   Benchmarks/reliability/mixed_load.sh [DURATION=300] [debug|release]
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-300}"
configuration="${2:-debug}"
swift build -c "$configuration" --product chorus >/dev/null
chorus="$(swift build -c "$configuration" --show-bin-path)/chorus"
work="$(mktemp -d)"
cp "$chorus" "$work/chorus"
port=$((20000 + RANDOM % 20000))
key="load-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
CHORUS_API_KEYS="$key" "$work/chorus" serve --port "$port" --data-dir "$work/data" --rate-limit 0 --key-renders 64 >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 100); do curl -fs "$url/health" >/dev/null && break; sleep 0.2; done
auth=(-H "Authorization: Bearer $key" -H "Content-Type: application/json")
id=$(curl -fs "${auth[@]}" -d '{"messages": [{"speaker": "Ann", "text": "A stored render for the readers to seek in, long enough to have some bytes to range over."}, {"speaker": "Ben", "text": "And a second message."}]}' "$url/v1/renders" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
size=$(curl -fsI -H "Authorization: Bearer $key" "$url/v1/renders/$id/audio" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-length"{print $2}')

sample() { echo "$(date +%s) $(awk '/VmRSS/{print $2}' /proc/$server/status) $(ls /proc/$server/fd | wc -l)"; }
sample >"$work/samples"
( while sleep 10; do sample >>"$work/samples"; done ) &
sampler=$!
( end=$((SECONDS + duration)); n=0
  while [ $SECONDS -lt $end ]; do
    n=$((n + 1))
    code=$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" \
      -d "{\"messages\": [{\"speaker\": \"Ann\", \"text\": \"Load message $n at $(date +%s%N).\", \"voice\": \"espeak:en-us\"}, {\"speaker\": \"Ben\", \"text\": \"Reply $n.\", \"voice\": \"espeak:en-gb\"}]}" \
      "$url/v1/renders")
    echo "$code" >>"$work/renders"
  done ) &
writer=$!
SIZE=$size KEY=$key wrk -t2 -c16 -d"${duration}s" -s Benchmarks/service/ranges.lua "$url/v1/renders/$id/audio" | grep RESULT | sed 's/^RESULT/ranges:/'
wait $writer
kill $sampler 2>/dev/null || true
sample >>"$work/samples"
echo "renders: $(sort "$work/renders" | uniq -c | tr '\n' ' ')"
awk 'NR==1{s=$2; f=$3} {if ($2>m) m=$2; e=$2; g=$3} END {printf "RSS start %d MB, max %d MB, end %d MB; file descriptors start %d, end %d\n", s/1024, m/1024, e/1024, f, g}' "$work/samples"
echo "samples (time, RSS kB, fds): $work/samples"
echo "5xx in the log: $(grep -o '"status":"5[0-9][0-9]"' "$work/serve.log" | wc -l)"

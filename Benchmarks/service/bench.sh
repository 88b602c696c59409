#!/usr/bin/env bash
# Measures `chorus serve` (release build) on this machine and prints the figures the service issue asks for:
#   1. 50 text messages through a stub provider answering after 1 s, 4 requests in flight: POST /v1/renders, then the same again
#   2. ?stream=true: time to the first audio byte, with the stub provider and with espeak-ng
#   3. random byte ranges of a stored 5-minute MP3, 64 connections for 30 s, side by side with nginx serving the same file
#   4. overload: 4x (workers + queue) concurrent renders: 202 vs 503, and the service's peak memory
# Needs: a release build (swift build -c release --product chorus), wrk, nginx, python3, ffmpeg (to make the long clip).
#   Benchmarks/service/bench.sh [SECTION…]   e.g. `bench.sh 3` for the ranges only; all four by default.
#   CHORUS=path/to/chorus bench.sh 3          measures another build of chorus (e.g. an earlier commit's)
set -euo pipefail
SECTIONS=" ${*:-1 2 3 4} "
want() { [[ "$SECTIONS" == *" $1 "* ]]; }
cd "$(dirname "$0")/../.."
CHORUS=${CHORUS:-.build/release/chorus}
HERE=Benchmarks/service
WORK=$(mktemp -d /tmp/chorus-service-bench.XXXX); chmod 755 "$WORK"   # nginx's workers read the stored file
KEY=bench-key-0123456789abcdef
STUB_PORT=18601; SERVICE_PORT=18602; NGINX_PORT=18603
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; nginx -s stop -c "$WORK/nginx.conf" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

python3 $HERE/stub_provider.py $STUB_PORT 1.0 & pids+=($!)
CHORUS_API_KEYS=$KEY CHORUS_RATE_LIMIT=0 CHORUS_KEY_RENDERS=1000 OPENAI_API_KEY=stub-key OPENAI_BASE_URL=http://127.0.0.1:$STUB_PORT/v1 \
  $CHORUS serve --port $SERVICE_PORT --data-dir "$WORK/data" --concurrency 4 > "$WORK/serve.log" 2>&1 & SERVICE=$!; pids+=($SERVICE)
for _ in $(seq 50); do curl -sf localhost:$SERVICE_PORT/health >/dev/null && break; sleep 0.2; done
URL=http://127.0.0.1:$SERVICE_PORT

messages() { # $1 count, $2 voice, $3 tag
  python3 -c "import json,sys; n,v,t=int(sys.argv[1]),sys.argv[2],sys.argv[3]; print(json.dumps({'messages':[{'speaker':['Sarah','Marcus','Aisha','Dad'][i%4],'text':f'{t} message {i+1}: practice moved to half past four, and dinner is at seven tonight.','voice':v} for i in range(n)]}))" "$@"
}

if want 1; then
echo "== 1. 50 text messages, stub provider answering after 1 s, concurrency 4 (floor: 13 rounds = 13.0 s)"
BODY=$(messages 50 openai:nova first)
curl -s -o "$WORK/m.json" -w "first request: %{http_code} in %{time_total} s\n" -H "Authorization: Bearer $KEY" -d "$BODY" $URL/v1/renders
for run in 1 2 3; do curl -s -o /dev/null -w "identical request again: %{http_code} in %{time_total} s\n" -H "Authorization: Bearer $KEY" -d "$BODY" $URL/v1/renders; done

fi

if want 2; then
echo "== 2. ?stream=true, time to the first audio byte"
python3 $HERE/first_byte.py "$URL/v1/renders?stream=true" "$(messages 10 openai:nova streamed)" $KEY | sed 's/^/stub provider (1 s), 10 messages: /'
python3 $HERE/first_byte.py "$URL/v1/renders?stream=true" "$(messages 10 espeak:en-us espeak)" $KEY | sed 's/^/espeak-ng, 10 messages: /'

fi

if want 3; then
echo "== 3. random ranges of a stored 5-minute MP3, 64 connections, 30 s; chorus vs nginx on the same file"
ffmpeg -v error -f lavfi -i "sine=frequency=220:duration=300" -ar 16000 -ac 1 "$WORK/long.wav"
CLIP=$(curl -s -H "Authorization: Bearer $KEY" --data-binary @"$WORK/long.wav" $URL/v1/clips | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
ID=$(curl -s -H "Authorization: Bearer $KEY" -d "{\"messages\": [{\"speaker\": \"A\", \"clip\": \"$CLIP\"}]}" $URL/v1/renders | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
FILE="$WORK/data/renders/$ID/audio.mp3"; SIZE=$(stat -c %s "$FILE")
cat > "$WORK/nginx.conf" <<CONF
worker_processes 2; pid $WORK/nginx.pid; error_log $WORK/nginx-error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; server { listen 127.0.0.1:$NGINX_PORT; location = /audio.mp3 { alias $FILE; } } }
CONF
nginx -c "$WORK/nginx.conf"
echo "file: $SIZE bytes"
# Both orders (chorus, nginx, nginx, chorus): the VM's speed drifts within a minute, and the second run of a pair
# would otherwise always be the one measured later.
ranges_chorus() { SIZE=$SIZE KEY=$KEY wrk -t2 -c64 -d30s -s $HERE/ranges.lua "$URL/v1/renders/$ID/audio" | grep RESULT | sed 's/^RESULT/chorus:/'; }
ranges_nginx() { SIZE=$SIZE KEY= wrk -t2 -c64 -d30s -s $HERE/ranges.lua "http://127.0.0.1:$NGINX_PORT/audio.mp3" | grep RESULT | sed 's/^RESULT/nginx: /'; }
{ ranges_chorus; ranges_nginx; ranges_nginx; ranges_chorus; } | tee "$WORK/ranges.txt"
python3 - "$WORK/ranges.txt" <<'PY'
import re, sys
rates = {"chorus": [], "nginx": []}
for line in open(sys.argv[1]):
    name = line.split(":")[0].strip()
    rates[name].append(float(re.search(r"rps=(\d+)", line).group(1)))
c, n = sum(rates["chorus"]), sum(rates["nginx"])
print(f"chorus / nginx: {c / n:.0%} of nginx's requests per second (the two runs of each summed)")
PY

fi

if want 4; then
echo "== 4. overload: 4 x (workers + queue) concurrent renders"
echo "service memory before: $(awk '/VmRSS/ {print $2 " " $3}' /proc/$SERVICE/status) (peak so far $(awk '/VmHWM/ {print $2 " " $3}' /proc/$SERVICE/status))"
WORKERS=$(nproc); QUEUE=64; N=$(( 4 * (WORKERS + QUEUE) ))
seq $N | xargs -P 64 -I{} curl -s -o /dev/null -w "%{http_code}\n" -H "Authorization: Bearer $KEY" -H "Prefer: respond-async" \
  -d "{\"messages\": [{\"speaker\": \"A\", \"text\": \"Overload message {} for the queue test.\", \"voice\": \"espeak:en-us\"}]}" $URL/v1/renders \
  | sort | uniq -c | sed 's/^/responses: /'
for _ in $(seq 600); do
  # The gauge prints as a float ("0.0"): compared as a number.
  idle=$(curl -s $URL/metrics | awk '/^chorus_render_queue_depth/ {print ($2 + 0 == 0) ? "yes" : "no"}'); [ "${idle:-yes}" = "yes" ] && break; sleep 0.5
done
sleep 2
echo "service memory after: $(awk '/VmRSS/ {print $2 " " $3}' /proc/$SERVICE/status), peak $(awk '/VmHWM/ {print $2 " " $3}' /proc/$SERVICE/status)"
curl -s $URL/metrics | grep -E '^chorus_renders_total' | sed 's/^/metrics: /'
fi

#!/usr/bin/env bash
# Shared storage (`--storage`), measured through the service: two instances share one store; a long clip is uploaded
# to instance A (published to the store), rendered there (the audio published), then the audio is read whole and in
# ranges through instance B, which holds nothing of it (bytes read from the store). Once with a bucket on moto's S3
# server (the tests' server, Tests/ChorusTestSupport/s3_server.py), once with a shared folder, in the same run.
# Needs: a release build (swift build -c release --product chorus), python3 with moto[server], ffmpeg, curl.
set -euo pipefail
cd "$(dirname "$0")/../.."
CHORUS=${CHORUS:-.build/release/chorus}
WORK=$(mktemp -d /tmp/chorus-storage-bench.XXXX)
KEY=bench-key-0123456789abcdef
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

exec 3> >(python3 Tests/ChorusTestSupport/s3_server.py > "$WORK/s3.json" 2> "$WORK/s3.log")   # serves until this script ends
for _ in $(seq 100); do [ -s "$WORK/s3.json" ] && break; sleep 0.1; done
S3_PORT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["port"])' "$WORK/s3.json")
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1 AWS_ENDPOINT_URL_S3=http://127.0.0.1:$S3_PORT
aws s3 mb s3://chorus-bench >/dev/null 2>&1 || python3 -c "import boto3; boto3.client('s3', endpoint_url='$AWS_ENDPOINT_URL_S3').create_bucket(Bucket='chorus-bench')"

ffmpeg -v error -f lavfi -i "sine=frequency=220:duration=600" -ar 48000 -ac 2 "$WORK/long.wav"   # 10 min, 115 MB
echo "clip: $(stat -c %s "$WORK/long.wav") bytes"

port=18800
serve() { # $1 storage, $2 name → prints the port
  port=$((port + 1))
  CHORUS_API_KEYS=$KEY CHORUS_RATE_LIMIT=0 CHORUS_MAX_BODY_MB=200 $CHORUS serve --port $port --data-dir "$WORK/$2" --storage "$1" \
    > "$WORK/$2.log" 2>&1 & pids+=($!)
  for _ in $(seq 50); do curl -sf localhost:$port/health >/dev/null && break; sleep 0.2; done
}
seconds() { python3 -c "import sys; print(f'{float(sys.argv[1]):.2f} s')" "$1"; }

for storage in "s3://chorus-bench/run" "$WORK/shared-folder"; do
  echo "== --storage $storage"
  serve "$storage" "a-$port"; A=$port
  serve "$storage" "b-$port"; B=$port
  upload=$(curl -s -o "$WORK/clip.json" -w '%{time_total}' -H "Authorization: Bearer $KEY" --data-binary @"$WORK/long.wav" localhost:$A/v1/clips)
  CLIP=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$WORK/clip.json")
  render=$(curl -s -o "$WORK/render.json" -w '%{time_total}' -H "Authorization: Bearer $KEY" \
    -d "{\"messages\": [{\"speaker\": \"A\", \"clip\": \"$CLIP\"}], \"output\": {\"format\": \"wav\"}}" localhost:$A/v1/renders)
  ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$WORK/render.json")
  echo "upload to A: $(seconds $upload) (decode + publish); render on A: $(seconds $render) (render + publish)"
  for host in A B; do
    p=$([ $host = A ] && echo $A || echo $B)
    whole=$(curl -s -o "$WORK/got-$host.wav" -w '%{time_total} %{size_download}' -H "Authorization: Bearer $KEY" localhost:$p/v1/renders/$ID/audio)
    python3 -c "import sys; t,n=map(float,sys.argv[1:3]); print(f'audio through $host: {n/1e6:.1f} MB in {t:.2f} s = {n/1e6/t:.0f} MB/s')" $whole
  done
  cmp -s "$WORK/got-A.wav" "$WORK/got-B.wav" && echo "A and B served the same bytes"
  start=$(date +%s.%N)
  for i in $(seq 200); do curl -s -o /dev/null -r $((i * 100000))-$((i * 100000 + 65535)) -H "Authorization: Bearer $KEY" localhost:$B/v1/renders/$ID/audio; done
  python3 -c "import sys; print(f'200 ranges of 64 KB through B, one at a time: {(float(sys.argv[2]) - float(sys.argv[1])) / 200 * 1000:.1f} ms each')" $start $(date +%s.%N)
done

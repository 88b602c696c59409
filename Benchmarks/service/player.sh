#!/usr/bin/env bash
# Measures the player page in headless Chromium against `chorus serve` (release build): a 50-message render
# (Flite voices, four speakers), then five page loads, each from the `?key=` link through the 303 to the signed
# page. Prints, per load, milliseconds from navigation start until the page is interactive (timeline loaded,
# transcript and controls wired), until the audio's metadata is loaded, and until the waveform is drawn.
# Needs: a release build (swift build -c release --product chorus), chromium, chromium-driver, python3 + selenium.
set -euo pipefail
cd "$(dirname "$0")/../.."
CHORUS=.build/release/chorus
WORK=$(mktemp -d /tmp/chorus-player-bench.XXXX)
KEY=bench-key-0123456789abcdef
PORT=18611
cleanup() { kill "$SERVICE" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
CHORUS_API_KEYS=$KEY CHORUS_RATE_LIMIT=0 $CHORUS serve --port $PORT --data-dir "$WORK/data" > "$WORK/serve.log" 2>&1 & SERVICE=$!
for _ in $(seq 50); do curl -sf localhost:$PORT/health >/dev/null && break; sleep 0.2; done

python3 -c "
import json
lines = ['Are we still on for dinner tonight?', 'Yes, seven o\'clock at Grandma\'s.', 'Can someone pick up bread on the way?',
         'I will, the bakery is next to my office.', 'Do not forget the candles for the cake!']
print(json.dumps({'messages': [{'speaker': ['Mom', 'Dad', 'Grandma', 'Maya'][i % 4], 'text': lines[i % 5]} for i in range(50)]}))" > "$WORK/body.json"
curl -s -o "$WORK/manifest.json" -w "render of 50 messages: %{http_code} in %{time_total} s\n" -H "Authorization: Bearer $KEY" -d @"$WORK/body.json" localhost:$PORT/v1/renders
python3 -c "import json; m = json.load(open('$WORK/manifest.json')); json.dump(m['timeline'], open('$WORK/timeline.json', 'w')); print(m['id'])" > "$WORK/id"
sleep 2   # the stored base peaks are made just after the answer
for run in 1 2 3 4 5; do
  python3 Tests/ChorusTestSupport/player_check.py "http://127.0.0.1:$PORT/v1/renders/$(cat "$WORK/id")/player?key=$KEY" "$WORK/timeline.json" \
    --secret "$KEY" --expect-signed \
    | python3 -c "import json,sys; r = json.load(sys.stdin); print(f\"load {$run}: interactive {r['interactive_ms']:.0f} ms, audio ready {r['audio_ready_ms']:.0f} ms, waveform {r['peaks_ms']:.0f} ms ({r['duration']:.1f} s of audio, {r['resources']} requests)\")"
done

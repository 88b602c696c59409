#!/usr/bin/env bash
# Regenerates samples/clips from text with espeak-ng and FFmpeg (developer tool; the product never runs them).
# The results are committed, so nobody needs to run this to use Chorus.
set -euo pipefail
cd "$(dirname "$0")/../samples/clips"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
say() { espeak-ng -v "$1" -s "$2" -w "$tmp/$3.wav" "$4"; }
say en-us+f3 165 sarah-1  "Practice moved to four thirty today. Can someone grab Maya from school?"
say en-us+m3 150 marcus-1 "I can get her. I'm leaving work at four anyway."
say en-gb+f4 160 aisha-1  "Thanks! Also, we're out of milk and bread."
say en-us+m1 140 dad-1    "I'll stop at the store on the way home."
say en-us+f3 170 sarah-2  "Perfect. Dinner at seven, everyone."
# A different container and rate for each, as phones and providers deliver them.
ffmpeg -v error -y -i "$tmp/sarah-1.wav"  -ar 24000 -ac 1 -c:a libmp3lame -b:a 48k  sarah-1.mp3
ffmpeg -v error -y -i "$tmp/marcus-1.wav" -ar 44100 -ac 2 -c:a aac        -b:a 64k  marcus-1.m4a
ffmpeg -v error -y -i "$tmp/aisha-1.wav"  -ar 16000 -ac 1 -c:a pcm_s16le           aisha-1.wav
ffmpeg -v error -y -i "$tmp/dad-1.wav"    -ar 48000 -ac 1 -c:a libopus    -b:a 24k  dad-1.ogg
ffmpeg -v error -y -i "$tmp/sarah-2.wav"  -ar 22050 -ac 1 -c:a flac                 sarah-2.flac
ls -l

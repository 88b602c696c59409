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
# A jingle (a rising arpeggio, 2.6 s) and a music bed (a slowly swelling chord, 16 s, looped under a program), from
# FFmpeg's own sources.
ffmpeg -v error -y -f lavfi -i "aevalsrc='0.3*sin(2*PI*t*(262*lt(t,0.6)+330*gte(t,0.6)*lt(t,1.2)+392*gte(t,1.2)*lt(t,1.8)+523*gte(t,1.8)))*exp(-3*mod(t,0.6))':s=44100:d=2.6" \
  -af "afade=t=out:st=2.2:d=0.4" -ac 2 -c:a libmp3lame -b:a 96k jingle.mp3
ffmpeg -v error -y -f lavfi -i "aevalsrc='0.07*(sin(2*PI*110*t)+sin(2*PI*165*t)+sin(2*PI*220*t)+sin(2*PI*277.2*t))*(0.8+0.2*sin(2*PI*t/8))':s=44100:d=16" \
  -ac 1 -c:a libmp3lame -b:a 48k bed.mp3
ls -l

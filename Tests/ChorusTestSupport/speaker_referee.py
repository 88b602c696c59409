#!/usr/bin/env python3
"""Resemblyzer's speaker embedding, computed the original way in Python, as an independent referee for Chorus's
speaker encoder (tests only; never used by the product).

    speaker_referee.py embed CHECKPOINT AUDIO…      each file's embedding as resemblyzer's VoiceEncoder.embed_utterance
                                                    computes it, as JSON: a list of {"file", "samples", "embedding"
                                                    (256 floats), "partials" (each partial's embedding)}, one per file
    speaker_referee.py mels AUDIO OUT.f32           resemblyzer's mel frames of the audio as it is (no partials, no
                                                    padding), float32 frames × 40

CHECKPOINT is Resemblyzer's pretrained.pt, or `ge2e`: the one in set-up's cached resemblyzer 0.1.4 wheel
(~/.cache/chorus/setup), extracted into ~/.cache/chorus/setup/resemblyzer/pretrained.pt once. AUDIO is a WAV file
(16-bit or float, any rate, channels averaged) or raw mono float32 samples at 16 kHz (a name ending in .f32). Other
rates are resampled to 16 kHz with librosa.resample, as resemblyzer's preprocess_wav does (librosa ≥ 0.10's default
is soxr_hq; the librosa of resemblyzer's time used resampy's kaiser_best: compare on 16 kHz audio for exactness).

What is resemblyzer's and what is not:
- the mel frames: audio.wav_to_mel_spectrogram reimplemented with librosa directly (resemblyzer's audio.py imports
  webrtcvad and scipy.ndimage.morphology, and its package imports torch): librosa.feature.melspectrogram at 16 kHz,
  n_fft 400, hop 160, 40 mels, power 2 (NOT log), periodic Hann, centred frames, Slaney mel scale and Slaney area
  normalization, with pad_mode="reflect" given explicitly: the librosa of resemblyzer's time (0.7–0.9) padded by
  reflection by default, librosa ≥ 0.10 defaults to zeros ("constant");
- the partials: compute_partial_slices and embed_utterance's padding exactly as voice_encoder.py (rate 1.3,
  min_coverage 0.75; the audio padded with zeros to the end of the last partial before the mel frames are computed);
- the network: not PyTorch (not installed), but the NumPy implementation of torch.nn.LSTM's documented equations in
  scripts/prepare_speaker.py (reference_embeddings, float64), on the weights its reader takes from the checkpoint —
  independent of the ONNX graph Chorus runs, which that script checks against it;
- the utterance: the mean of the partials' embeddings, L2-normalized.
NOT applied: resemblyzer's preprocess_wav, which before embedding (1) resamples to 16 kHz, (2) raises the volume to
-30 dBFS RMS when it is quieter (normalize_volume(wav, -30, increase_only=True): only ever louder, never quieter),
and (3) removes silences longer than about 0.2 s with webrtcvad (mode 3, 30 ms windows, a moving average of 8
windows rounded, then dilated by 7 windows: trim_long_silences). `embed` embeds the audio as it is given, so that
Chorus's encoder can be compared on the same samples.

Runs in the referee environment scripts/setup.sh --test makes (librosa and soundfile from PyPI).
"""
import argparse
import json
import os
import sys
import tempfile
import zipfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from prepare_speaker import (FFT_SIZE, HOP, MEL_BANDS, MIN_COVERAGE, PARTIAL_FRAMES, PARTIAL_RATE,  # noqa: E402
                             SAMPLE_RATE, PreparationError, encoder_weights, reference_embeddings)

CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "chorus", "setup")
WHEEL = ("Resemblyzer-0.1.4-py3-none-any.whl", "resemblyzer/pretrained.pt")


def checkpoint(name):
    """The checkpoint's path: `name` itself, or (`ge2e`) set-up's cached one, extracted once."""
    if name != "ge2e":
        return name
    path = os.path.join(CACHE, "resemblyzer", "pretrained.pt")
    if not os.path.exists(path):
        wheel = os.path.join(CACHE, WHEEL[0])
        if not os.path.exists(wheel):
            sys.exit(f"speaker_referee: {wheel} is missing (scripts/setup-speech.sh fetches it)")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with zipfile.ZipFile(wheel) as archive:
            handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path))
            with os.fdopen(handle, "wb") as sink:
                sink.write(archive.read(WHEEL[1]))
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    return path


def load(path):
    """Mono float32 samples at 16 kHz."""
    if path.endswith(".f32"):
        return np.fromfile(path, dtype=np.float32)
    import soundfile
    samples, rate = soundfile.read(path, dtype="float32", always_2d=True)
    samples = samples.mean(axis=1)   # librosa.load's to_mono
    if rate != SAMPLE_RATE:
        import librosa
        samples = librosa.resample(samples, orig_sr=rate, target_sr=SAMPLE_RATE)
    return np.ascontiguousarray(samples, dtype=np.float32)


def mel_frames(samples):
    """resemblyzer's audio.wav_to_mel_spectrogram: (frames, 40) mel power, float32 (see the module's note)."""
    import librosa
    frames = librosa.feature.melspectrogram(y=samples, sr=SAMPLE_RATE, n_fft=FFT_SIZE, hop_length=HOP,
                                            n_mels=MEL_BANDS, window="hann", center=True, pad_mode="reflect",
                                            power=2.0, htk=False, norm="slaney")
    return frames.astype(np.float32).T


def partial_slices(n_samples, rate=PARTIAL_RATE, min_coverage=MIN_COVERAGE):
    """voice_encoder.VoiceEncoder.compute_partial_slices, as it is."""
    mel_window_step = 10   # ms (hparams)
    samples_per_frame = int((SAMPLE_RATE * mel_window_step / 1000))
    n_frames = int(np.ceil((n_samples + 1) / samples_per_frame))
    frame_step = int(np.round((SAMPLE_RATE / rate) / samples_per_frame))
    wav_slices, mel_slices = [], []
    steps = max(1, n_frames - PARTIAL_FRAMES + frame_step + 1)
    for i in range(0, steps, frame_step):
        mel_range = np.array([i, i + PARTIAL_FRAMES])
        wav_range = mel_range * samples_per_frame
        mel_slices.append(slice(*mel_range))
        wav_slices.append(slice(*wav_range))
    last_wav_range = wav_slices[-1]
    coverage = (n_samples - last_wav_range.start) / (last_wav_range.stop - last_wav_range.start)
    if coverage < min_coverage and len(mel_slices) > 1:
        mel_slices = mel_slices[:-1]
        wav_slices = wav_slices[:-1]
    return wav_slices, mel_slices


def embed_utterance(weights, wav):
    """voice_encoder.VoiceEncoder.embed_utterance: the utterance's embedding and its partials'."""
    wav_slices, mel_slices = partial_slices(len(wav))
    max_wave_length = wav_slices[-1].stop
    if max_wave_length >= len(wav):
        wav = np.pad(wav, (0, max_wave_length - len(wav)), "constant")
    mel = mel_frames(wav)
    mels = np.array([mel[s] for s in mel_slices])
    partial_embeds = reference_embeddings(weights, mels)
    raw_embed = np.mean(partial_embeds, axis=0)
    return raw_embed / np.linalg.norm(raw_embed, 2), partial_embeds


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    embed = commands.add_parser("embed")
    embed.add_argument("checkpoint")
    embed.add_argument("audio", nargs="+")
    mels = commands.add_parser("mels")
    mels.add_argument("audio")
    mels.add_argument("output")
    arguments = parser.parse_args()

    if arguments.command == "mels":
        mel_frames(load(arguments.audio)).tofile(arguments.output)
        return

    try:
        weights, _ = encoder_weights(checkpoint(arguments.checkpoint))
    except PreparationError as error:
        sys.exit(f"speaker_referee: {error}")
    results = []
    for path in arguments.audio:
        samples = load(path)
        embedding, partials = embed_utterance(weights, samples)
        results.append({"file": path, "samples": int(len(samples)), "embedding": [float(v) for v in embedding],
                        "partials": [[float(v) for v in partial] for partial in partials]})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()

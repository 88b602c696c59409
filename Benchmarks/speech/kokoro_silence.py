#!/usr/bin/env python3
"""Kokoro's vocoder on the frames with sound only: what it would save and what it costs (a measurement, not shipped).

Kokoro's decoder ends in a generator (iSTFTNet) that makes 24 kHz audio from frames at twice the duration frames'
rate and takes ~93 % of a clause's time; it makes the silence before the first word and after the last at full cost.
This cuts set-up's prepared graph in two (the generator's inputs from the decoder: the frames, the pitch curve, and the
predictor's energy curve, the decoder's N input) and runs the generator only from the first to the last frame whose
energy is above --silent (with --margin frames either side), zeros elsewhere, against the whole graph. It prints:
- the generator frames left out (mean over the set, and for "Take 1."), and the time of the whole graph and of the
  cut one (one thread, the sum over the set);
- the loudest sample of the whole graph's audio in the frames left out (what the cut would lose outright);
- what the cut changes in what it keeps: the level of the last 100 ms of sound (the whole graph's last frame above
  -60 dBFS) in both, per sentence — the generator's instance norms and dynamic quantization take their statistics over
  every frame it is given, so leaving silence out changes the audio everywhere, most in the quiet ends of words.

    ~/.cache/chorus/setup/converter-venv/bin/python Benchmarks/speech/kokoro_silence.py [--silent -3.5] [--margin 6]

Needs set-up's Kokoro (the models folder's kokoro/), the converter venv set-up makes (onnx, onnxruntime, numpy) and
espeak-ng's library (Debian's libespeak-ng1). The sentences are made_voices.py's twenty and "Take 1.", read into
phonemes by espeak-ng and KokoroSynthesizer.trainedSymbols' table restated here (close to, not exactly, the tokens
Chorus gives: no stress or piece rules of IPA.piperPhonemes), which is enough to compare the graph with its cut.
"""
import argparse
import ctypes
import json
import os
import sys
import tempfile
import time

import numpy as np
import onnxruntime
from onnx import utils

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from made_voices import SENTENCES  # noqa: E402

MODELS = os.environ.get("CHORUS_MODELS_DIR") or os.path.expanduser("~/.local/share/chorus/models")
KOKORO = os.path.join(MODELS, "kokoro")
FRAMES = "/decoder/decoder/decode.3/Div_4_output_0"
PITCH = "/decoder/decoder/Unsqueeze_output_0"
ENERGY = "/decoder/decoder/Unsqueeze_1_output_0"
SAMPLES = 300  # a generator frame's samples at 24 kHz
# espeak-ng's IPA in the symbols Kokoro's English was trained on (KokoroSynthesizer.trainedSymbols, American).
TRAINED = [("eɪ", "A"), ("aɪ", "I"), ("aʊ", "W"), ("ɔɪ", "Y"), ("dʒ", "ʤ"), ("tʃ", "ʧ"), ("oʊ", "O"), ("ɚ", "əɹ"),
           ("ɜː", "ɜɹ"), ("ɾ", "T"), ("ː", "")]


def phonemes(text, espeak):
    buffer = ctypes.create_string_buffer(text.encode())
    pointer = ctypes.c_void_p(ctypes.addressof(buffer))
    parts = []
    while pointer.value:
        part = espeak.espeak_TextToPhonemes(ctypes.byref(pointer), 1, 0x02)
        if part:
            parts.append(part.decode())
    ipa = " ".join(parts)
    for written, trained in TRAINED:
        ipa = ipa.replace(written, trained)
    return ipa + (text.strip()[-1] if text.strip()[-1] in ".?!" else ".")


def session(path):
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def level(samples):
    return 10 * np.log10(float(np.mean(np.square(samples))) + 1e-12)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--silent", type=float, default=-3.5)
    parser.add_argument("--margin", type=int, default=6)
    arguments = parser.parse_args()

    espeak = ctypes.cdll.LoadLibrary("libespeak-ng.so.1")
    espeak.espeak_Initialize(0x02, 0, None, 0)
    espeak.espeak_SetVoiceByName(b"en-us")
    espeak.espeak_TextToPhonemes.restype = ctypes.c_char_p
    espeak.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int]
    vocabulary = json.load(open(os.path.join(KOKORO, "vocab.json")))
    vocabulary = vocabulary.get("vocab", vocabulary)
    voices = np.load(os.path.join(KOKORO, "voices", "voices_ja.npz"))
    model = os.path.join(KOKORO, "model.onnx")

    with tempfile.TemporaryDirectory() as scratch:
        front_path, generator_path = os.path.join(scratch, "front.onnx"), os.path.join(scratch, "generator.onnx")
        utils.extract_model(model, front_path, ["tokens", "style", "speed"], [FRAMES, PITCH, ENERGY])
        utils.extract_model(model, generator_path, [FRAMES, PITCH, "style"], ["audio"])
        whole, front, generator = session(model), session(front_path), session(generator_path)

        texts = ["Take 1."] + SENTENCES
        left_out, take_one, lost, ends = [], [], -200.0, []
        whole_seconds = cut_seconds = 0.0
        for voice in voices.files:
            styles = voices[voice].reshape(510, 256)
            for text in texts:
                ids = [vocabulary[symbol] for symbol in phonemes(text, espeak) if symbol in vocabulary]
                feed = {"tokens": np.array([[0] + ids + [0]], np.int64), "style": styles[len(ids)][None],
                        "speed": np.array([1.0], np.float32)}
                started = time.perf_counter()
                (audio,) = whole.run(["audio"], feed)
                whole_seconds += time.perf_counter() - started
                started = time.perf_counter()
                frames, pitch, energy = front.run([FRAMES, PITCH, ENERGY], feed)
                energy = energy.reshape(-1)
                loud = np.flatnonzero(energy > arguments.silent)
                start = max(0, int(loud[0]) - arguments.margin) if len(loud) else 0
                end = min(len(energy), int(loud[-1]) + 1 + arguments.margin) if len(loud) else len(energy)
                cut = np.zeros_like(audio)
                (cut[start * SAMPLES:end * SAMPLES],) = generator.run(
                    ["audio"], {FRAMES: frames[:, :, start:end], PITCH: pitch[:, :, start:end], "style": feed["style"]})
                cut_seconds += time.perf_counter() - started
                share = 1 - (end - start) / len(energy)
                left_out.append(share)
                if text == "Take 1.":
                    take_one.append(share)
                outside = np.concatenate([audio[:start * SAMPLES], audio[end * SAMPLES:]])
                if len(outside):
                    lost = max(lost, 20 * np.log10(float(np.abs(outside).max()) + 1e-9))
                peaks = 20 * np.log10(np.abs(audio.reshape(-1, SAMPLES)).max(axis=1) + 1e-9)
                last = int(np.flatnonzero(peaks > -60)[-1]) + 1
                window = slice(max(0, last - 8) * SAMPLES, last * SAMPLES)
                ends.append((level(audio[window]) - level(cut[window]), voice, text))

    print(f"rule: energy above {arguments.silent}, {arguments.margin} frames ({arguments.margin * 12.5:.0f} ms) either side")
    print(f"generator frames left out: mean {np.mean(left_out):.0%} (min {np.min(left_out):.0%}, max "
          f"{np.max(left_out):.0%}); \"Take 1.\": {', '.join(f'{share:.0%}' for share in take_one)}")
    print(f"time, one thread, {len(left_out)} clauses: whole graph {whole_seconds:.1f} s, cut {cut_seconds:.1f} s "
          f"({cut_seconds / whole_seconds:.2f})")
    print(f"loudest sample left out: {lost:.1f} dBFS")
    losses = sorted(ends, reverse=True)
    print(f"last 100 ms of sound, whole minus cut: median {np.median([loss for loss, _, _ in ends]):+.1f} dB; "
          f"the worst: " + "; ".join(f"{loss:+.1f} dB {voice} \"{text[-24:]}\"" for loss, voice, text in losses[:4]))


if __name__ == "__main__":
    main()

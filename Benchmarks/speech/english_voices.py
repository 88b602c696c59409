#!/usr/bin/env python3
"""How Chorus's own English voices (af_linden, af_wren, am_alder, am_rowan; scripts/make_english_voices.py) do:
intelligibility, pitch, how far each is from every person it was aimed at, and how different they are from each other.

    python3 Benchmarks/speech/english_voices.py [--chorus .build/release/chorus] [--manifest M] [--work DIR]
                                                [--report R.md] [--results R.json]

1. Each English voice, and for comparison jm_kumo and jf_gongitsune (the Japanese pack's best understood), reads the
   20 sentences of made_voices.py (none of the search's or Intelligibility.swift's own) with `chorus speak` to 24 kHz
   WAV (two at a time; kept under WORK/renders/VOICE/DIGEST).
2. Whisper base (faster-whisper int8, Tests/ChorusTestSupport/whisper_referee.py, language en) transcribes them: the
   word error rate over the 20 sentences, normalized as made_voices.py does.
3. Pitch: the median of librosa's yin over the loud frames of all 20 renders against the geometric mean of the people's
   (each person's median over their recordings the voice was made from), and pyin's voiced median beside it.
4. ECAPA-TDNN (Benchmarks/speech/ecapa_judge.py, a model the search never used): each voice's embedding (the mean of
   its 20 renders') against each person it was aimed at (the mean of their recordings') — a voice that imitated one of
   them would be near that person's own second recording (made_voices.py's ceilings: 0.75-0.94) — and the four
   voices against each other.

Needs the referee venv (scripts/setup.sh --test) and the human corpus (Benchmarks/speech/human_corpus.py). WORK
defaults to /tmp/english_voices; about 5 minutes on two cores.
"""
import argparse
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import made_voices as mv  # noqa: E402
import make_english_voices as english  # noqa: E402

REFERENCES = ["jm_kumo", "jf_gongitsune"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chorus", default=os.path.join(ROOT, ".build", "release", "chorus"))
    parser.add_argument("--manifest", default=os.path.expanduser("~/.cache/chorus/human-corpus/manifest.json"))
    parser.add_argument("--work", default="/tmp/english_voices")
    parser.add_argument("--report", default="/tmp/english_voices_report.md")
    parser.add_argument("--results", default="/tmp/english_voices_results.json")
    args = parser.parse_args()
    chorus = os.path.abspath(args.chorus)
    work = os.path.abspath(args.work)
    os.makedirs(os.path.join(work, "cache"), exist_ok=True)
    with open(args.manifest) as f:
        paths = {item["id"]: item["path"] for item in json.load(f)}
    listed = mv.subprocess.run([chorus, "voices", "--provider", "kokoro"], capture_output=True, text=True).stdout
    digest = mv.hashlib.sha256(mv.file_key(chorus).encode()).hexdigest()  # the voices live in the binary: renders per binary
    voices = {name: digest for name in english.VOICES}
    missing = [name for name in voices if f"kokoro:{name}" not in listed]
    if missing:
        raise SystemExit(f"{chorus} does not list {', '.join(missing)} (set-up's Kokoro voices needed)")
    voices.update({name: "stock" for name in REFERENCES})
    renders = mv.render_all(chorus, voices, work)

    all_renders = [p for ps in renders.values() for p in ps]
    transcripts = mv.transcribe_all(all_renders, work)
    wer = {voice: mv.word_errors(renders[voice], transcripts) for voice in voices}

    groups = {name: [[paths[i] for i in person] for person in english.recordings(name)] for name in english.VOICES}
    recordings = sorted({p for people in groups.values() for person in people for p in person})
    pitch = mv.run_workers("pitch", all_renders + recordings, work, "pitch.json")
    embeddings = mv.run_workers("embed", all_renders + recordings, work, "embeddings.json")

    def yin_median(files):
        values = [v for f in files for v in pitch[f]["yin_loud"]]
        return statistics.median(values) if values else None

    def pyin_median(files):
        values = [v for f in files for v in pitch[f]["pyin"]]
        return statistics.median(values) if values else None

    voice_embedding = {v: mv.mean_embedding([embeddings[p] for p in renders[v]]) for v in voices}
    results = {"voices": {}, "references": {}}
    for name, (sounds, seed, people) in english.VOICES.items():
        person_pitches = [yin_median(files) for files in groups[name]]
        target = math.exp(sum(math.log(p) for p in person_pitches) / len(person_pitches))
        voice_pitch = yin_median(renders[name])
        similarities = [mv.cosine(voice_embedding[name], mv.mean_embedding([embeddings[p] for p in files]))
                        for files in groups[name]]
        results["voices"][name] = {
            "sounds": sounds, "people": [english.PEOPLE[person][0] for person, _ in people],
            "wer": wer[name]["wer"], "wrong": wer[name]["wrong"],
            "people_pitch_hz": person_pitches, "target_pitch_hz": target, "voice_pitch_hz": voice_pitch,
            "voice_pyin_hz": pyin_median(renders[name]), "pitch_off": voice_pitch / target - 1,
            "ecapa_to_people": similarities,
        }
    for name in REFERENCES:
        results["references"][name] = {"wer": wer[name]["wer"], "voice_pitch_hz": yin_median(renders[name])}
    names = list(english.VOICES)
    results["between"] = {a: {b: mv.cosine(voice_embedding[a], voice_embedding[b]) for b in names} for a in names}

    lines = ["| voice | aimed at | WER (20 sentences, Whisper base) | pitch: people → target / voice (yin) | off | "
             "ECAPA to each person |", "|---|---|---|---|---|---|"]
    for name, r in results["voices"].items():
        lines.append(f"| `{name}` ({r['sounds']}) | {' + '.join(r['people'])} | {mv.pct(r['wer'])} | "
                     f"{' & '.join(f'{p:.0f}' for p in r['people_pitch_hz'])} → {r['target_pitch_hz']:.0f} / "
                     f"{r['voice_pitch_hz']:.0f} Hz | {100 * r['pitch_off']:+.0f} % | "
                     f"{' / '.join(mv.fmt(s) for s in r['ecapa_to_people'])} |")
    lines.append("")
    lines.append("References in the same run: " + ", ".join(
        f"`{n}` {mv.pct(r['wer'])} ({r['voice_pitch_hz']:.0f} Hz)" for n, r in results["references"].items()))
    lines.append("")
    lines.append("ECAPA between the voices: " + ", ".join(
        f"{a}–{b} {results['between'][a][b]:.2f}" for i, a in enumerate(names) for b in names[i + 1:]))
    for name, r in results["voices"].items():
        for wrong in r["wrong"]:
            lines.append(f"- {name}: \"{wrong['sentence']}\" heard \"{wrong['heard'].strip()}\"")
    report = "\n".join(lines) + "\n"
    print(report)
    with open(args.report, "w") as f:
        f.write(report)
    mv.save_json(args.results, results)


if __name__ == "__main__":
    main()

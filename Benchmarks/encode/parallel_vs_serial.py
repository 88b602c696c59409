#!/usr/bin/env python3
"""Parallel MP3 or AAC encoding against one encoder, message by message (issue 10's quality check).

    Benchmarks/encode/parallel_vs_serial.py CONVERSATION.json [--chorus .build/release/chorus] [--jobs 2] [--format mp3|m4a]

Renders the conversation three times with the same options — WAV (the exact PCM the encoders get), MP3 (or M4A)
with one encoder (`--serial-encode`) and in pieces (`--jobs N`) — decodes both with ffmpeg (the referee) and prints,
per message, the largest and the RMS difference between the two encodes and each one's own codec noise against
the PCM, then the sample counts and the gaps: the middle frame (1,152 or 1,024 samples) of every gap must be exactly
0 in both. FFmpeg 5.1's command line skips an MP4 edit list's priming but not its end, so for M4A the length checked
is ffprobe's (after the edit list) and the decoded samples are cut there. Needs ffmpeg and numpy.
"""
import argparse, json, os, subprocess, sys, tempfile
import numpy as np

def decode(path, channels):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "s16le", "-"], capture_output=True, check=True).stdout
    samples = np.frombuffer(raw, dtype=np.int16).reshape(-1, channels).astype(np.float64) / 32768
    if path.endswith(".m4a"):
        length = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts",
                                 "-of", "csv=p=0", path], capture_output=True, check=True, text=True).stdout
        samples = samples[:int(length)]
    return samples

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("conversation")
    parser.add_argument("--chorus", default=".build/release/chorus")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--format", choices=["mp3", "m4a"], default="mp3")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="chorus-parallel-")
    def render(name, *extra):
        path = os.path.join(work, name)
        subprocess.run([args.chorus, "render", args.conversation, "-o", path, "--timeline", path + ".json", "--quiet", *extra], check=True)
        return path
    wav = render("pcm.wav")
    serial = render(f"serial.{args.format}", "--serial-encode")
    pieces = render(f"pieces.{args.format}", "--jobs", str(args.jobs))
    timeline = json.load(open(wav + ".json"))
    for other in (serial, pieces):
        if json.load(open(other + ".json")) != timeline:
            sys.exit(f"{os.path.basename(other)}: its timeline differs from the WAV render's")
    channels = timeline["channels"]
    pcm, one, many = decode(wav, channels), decode(serial, channels), decode(pieces, channels)
    print(f"samples: timeline {timeline['samples']}, pcm {len(pcm)}, one encoder {len(one)}, pieces {len(many)}")
    if not (len(pcm) == len(one) == len(many) == timeline["samples"]):
        sys.exit("sample counts differ")
    print(f"{'message':>7} {'speaker':<10} {'pieces vs one: max':>19} {'RMS':>9} {'one vs pcm: RMS':>16} {'pieces vs pcm: RMS':>19}")
    rms = lambda x: float(np.sqrt(np.mean(x ** 2))) if x.size else 0.0
    worst_max, worst_ratio = 0.0, 0.0
    for segment in timeline["segments"]:
        a, b = segment["start_sample"], segment["end_sample"]
        d = many[a:b] - one[a:b]
        noise_one, noise_many = rms(one[a:b] - pcm[a:b]), rms(many[a:b] - pcm[a:b])
        worst_max = max(worst_max, float(np.abs(d).max()) if d.size else 0.0)
        if noise_one > 0: worst_ratio = max(worst_ratio, noise_many / noise_one)
        print(f"{segment['index']:>7} {segment['speaker'][:10]:<10} {float(np.abs(d).max()) if d.size else 0:>19.5f} {rms(d):>9.5f} {noise_one:>16.5f} {noise_many:>19.5f}")
    silent = 0
    half = 576 if args.format == "mp3" else 512
    gaps = list(zip(timeline["segments"], timeline["segments"][1:]))
    for previous, following in gaps:
        middle = (previous["end_sample"] + following["start_sample"]) // 2
        window = slice(middle - half, middle + half)
        if not np.any(many[window]) and not np.any(one[window]): silent += 1
    print(f"largest difference between the encodes {worst_max:.5f} (full scale 1); pieces' codec noise at most {worst_ratio:.2f}× one encoder's")
    print(f"whole file, against the PCM: one encoder RMS {rms(one - pcm):.5f}, largest {float(np.abs(one - pcm).max()):.4f}; "
          f"pieces RMS {rms(many - pcm):.5f}, largest {float(np.abs(many - pcm).max()):.4f}")
    print(f"gaps whose middle {2 * half:,} samples are exactly 0 in both: {silent} of {len(gaps)}")

if __name__ == "__main__":
    main()

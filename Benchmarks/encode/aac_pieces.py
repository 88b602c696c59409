#!/usr/bin/env python3
"""Would AAC survive the parallel-MP3 trick? The measurement that decided it (issue 10), with FFmpeg's command line
only. Chorus now encodes M4A in pieces itself (`AACJoiner`); `parallel_vs_serial.py --format m4a` measures that.

    Benchmarks/encode/aac_pieces.py CONVERSATION.json [--chorus .build/release/chorus] [--bitrate 128k] [--pieces 2 8]

Renders the conversation to WAV with Chorus (the exact PCM an encoder gets), then, with FFmpeg's native AAC encoder
(the one Chorus uses through libavcodec) at the same settings:
- encodes the whole PCM with one encoder (raw ADTS packets, 1,024 samples each, the first 1,024 output samples being
  the encoder's priming);
- splits the PCM at points q on the 1,024-sample packet grid inside the conversation's gaps (silence at least 4,096
  samples on both sides, covering the 2,048-sample MDCT window and the encoder's 1,024-sample delay), encodes every
  piece with a fresh encoder, and joins the packets: piece k gives the packets whose output lies in [q_k, q_k+1)
  (packet i of a piece starting at q is packet i + q / 1,024 of the whole);
- decodes both streams with FFmpeg (the referee) and prints: the sample counts, the largest and RMS difference
  between the joined and the single encode (against each one's own noise versus the PCM), and the largest
  magnitude of the joined stream's decoded samples over ±1,024 samples around every splice (0 means exact there).
Needs ffmpeg and numpy.
"""
import json, subprocess
import numpy as np
import pieces

PACKET = 1024


def adts_packets(data):
    """The ADTS frames of `data`, each a bytes object (header included)."""
    packets, at = [], 0
    while at + 7 <= len(data):
        assert data[at] == 0xFF and data[at + 1] & 0xF0 == 0xF0, f"lost ADTS sync at byte {at}"
        length = ((data[at + 3] & 0x03) << 11) | (data[at + 4] << 3) | (data[at + 5] >> 5)
        packets.append(data[at:at + length])
        at += length
    return packets


def encode(pcm, rate, channels, bitrate):
    raw = (np.clip(pcm, -1, 1 - 1 / 32768) * 32768).astype("<i2").tobytes()
    out = subprocess.run(["ffmpeg", "-v", "error", "-f", "s16le", "-ar", str(rate), "-ac", str(channels), "-i", "-",
                          "-c:a", "aac", "-b:a", bitrate, "-f", "adts", "-"], input=raw, capture_output=True, check=True).stdout
    return adts_packets(out)


def decode(packets, channels):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-f", "aac", "-i", "-", "-f", "s16le", "-"],
                         input=b"".join(packets), capture_output=True, check=True).stdout
    return np.frombuffer(raw, dtype=np.int16).reshape(-1, channels).astype(np.float64) / 32768


def read_wav(path):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "s16le", "-"], capture_output=True, check=True).stdout
    info = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", path],
                                     capture_output=True, check=True).stdout)["streams"][0]
    channels = int(info["channels"])
    return np.frombuffer(raw, dtype=np.int16).reshape(-1, channels).astype(np.float64) / 32768, int(info["sample_rate"]), channels


def main():
    args = pieces.arguments("128k")
    work, wav, segments = pieces.render(args, "aac")
    pcm, rate, channels = read_wav(wav)
    candidates = pieces.candidates(segments, PACKET)
    single = encode(pcm, rate, channels, args.bitrate)
    reference = decode(single, channels)
    print(f"{len(pcm)} samples at {rate} Hz, {channels} channel(s); one encoder: {len(single)} packets, "
          f"{len(reference)} decoded samples (the first {PACKET} are priming); {len(candidates)} gaps can take a split")
    aligned = reference[PACKET:PACKET + len(pcm)]
    own_noise = aligned - pcm
    for count in args.pieces:
        if count - 1 > len(candidates):
            print(f"{count} pieces: not enough gaps")
            continue
        splits = pieces.cuts(candidates, count)
        bounds = [0] + splits + [len(pcm)]
        joined = []
        for k in range(count):
            encoded = encode(pcm[bounds[k]:bounds[k + 1] + pieces.MARGIN if k + 1 < count else len(pcm)], rate, channels, args.bitrate)
            first, last = bounds[k] // PACKET, (bounds[k + 1] // PACKET if k + 1 < count else None)
            offset = bounds[k] // PACKET   # packet i of the piece is packet i + offset of the whole
            joined += encoded[first - offset:(last - offset) if last is not None else None]
        decoded = decode(joined, channels)
        same_length = len(decoded) == len(reference)
        n = min(len(decoded), len(reference))
        difference = decoded[:n] - reference[:n]
        splice = max(np.abs(decoded[PACKET + q - 1024:PACKET + q + 1024]).max() for q in splits)
        joined_noise = decoded[PACKET:PACKET + len(pcm)] - pcm[:max(0, min(len(pcm), n - PACKET))]
        print(f"{count} pieces: {len(joined)} packets (one encoder: {len(single)}), {len(decoded)} decoded samples "
              f"({'same' if same_length else 'DIFFERENT'}); joined vs one encoder: max {np.abs(difference).max():.5f}, "
              f"RMS {np.sqrt((difference ** 2).mean()):.6f}; codec noise vs PCM: one encoder max {np.abs(own_noise).max():.5f} "
              f"RMS {np.sqrt((own_noise ** 2).mean()):.6f}, joined max {np.abs(joined_noise).max():.5f} "
              f"RMS {np.sqrt((joined_noise ** 2).mean()):.6f}; "
              f"largest |sample| within ±1,024 of a splice: {splice:.6f}")


if __name__ == "__main__":
    main()

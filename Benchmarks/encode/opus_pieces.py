#!/usr/bin/env python3
"""Would Opus survive the parallel-MP3 trick? A measurement, not a product path (issue 10).

    Benchmarks/encode/opus_pieces.py CONVERSATION.json [--chorus .build/release/chorus] [--bitrate 64k] [--pieces 2 8]

Renders the conversation to WAV at 48 kHz with Chorus, encodes it with libopus through FFmpeg (as Chorus does) once
whole and once in pieces split on the 960-sample (20 ms) packet grid inside the gaps (4,096 silent samples on both
sides), joins the pieces' packets into one Ogg stream (the whole encode's headers, packets renumbered, granule
positions recomputed, the same end trimming), decodes both with FFmpeg (the referee) and prints the sample counts,
the difference between the two and the largest |sample| within ±1,024 samples of each splice (0 would be exact), with
the one encoder's decode at the same places.
Needs ffmpeg and numpy.
"""
import os, struct, subprocess
import numpy as np
import pieces

PACKET = 960


def crc32_ogg(data):
    crc = 0
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if crc & 0x80000000 else (crc << 1) & 0xFFFFFFFF
    return crc


def ogg_packets(data):
    """All packets of a single-stream Ogg file, in order, and the last page's granule position."""
    packets, current, at, granule = [], b"", 0, 0
    while at < len(data):
        assert data[at:at + 4] == b"OggS", f"lost Ogg sync at byte {at}"
        granule = struct.unpack("<q", data[at + 6:at + 14])[0]
        count = data[at + 26]
        lacing = data[at + 27:at + 27 + count]
        body = at + 27 + count
        for size in lacing:
            current += data[body:body + size]
            body += size
            if size < 255:
                packets.append(current)
                current = b""
        at = body
    return packets, granule


def ogg_page(serial, sequence, granule, packets, header_type=0):
    lacing, body = b"", b""
    for packet in packets:
        lacing += b"\xff" * (len(packet) // 255) + bytes([len(packet) % 255])
        body += packet
    assert len(lacing) <= 255
    header = b"OggS" + bytes([0, header_type]) + struct.pack("<qIII", granule, serial, sequence, 0) + bytes([len(lacing)]) + lacing
    page = bytearray(header + body)
    struct.pack_into("<I", page, 22, crc32_ogg(bytes(page)))
    return bytes(page)


def encode(pcm, bitrate, work, name):
    path = os.path.join(work, name)
    raw = (np.clip(pcm, -1, 1 - 1 / 32768) * 32768).astype("<i2").tobytes()
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "s16le", "-ar", "48000", "-ac", "1", "-i", "-", "-c:a", "libopus",
                    "-b:a", bitrate, path], input=raw, check=True)
    return ogg_packets(open(path, "rb").read())


def decode(path):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "s16le", "-ac", "1", "-"], capture_output=True, check=True).stdout
    return np.frombuffer(raw, dtype=np.int16).astype(np.float64) / 32768


def main():
    args = pieces.arguments("64k")
    work, wav, segments = pieces.render(args, "opus", "--sample-rate", "48000", "--channels", "1")
    pcm = decode(wav)
    candidates = pieces.candidates(segments, PACKET)
    whole, granule = encode(pcm, args.bitrate, work, "whole.ogg")
    head, tags, audio = whole[0], whole[1], whole[2:]
    reference = decode(os.path.join(work, "whole.ogg"))
    print(f"{len(pcm)} samples at 48 kHz; one encoder: {len(audio)} packets, {len(reference)} decoded samples; "
          f"{len(candidates)} gaps can take a split")
    for count in args.pieces:
        splits = pieces.cuts(candidates, count)
        bounds = [0] + splits + [len(pcm)]
        joined = []
        for k in range(count):
            last_piece = k + 1 == count
            piece, _ = encode(pcm[bounds[k]:len(pcm) if last_piece else bounds[k + 1] + pieces.MARGIN], args.bitrate, work, f"piece{k}.ogg")
            piece = piece[2:]
            offset = bounds[k] // PACKET   # packet i of the piece covers the time of packet i + offset of the whole
            first, last = bounds[k] // PACKET, None if last_piece else bounds[k + 1] // PACKET
            joined += piece[first - offset:None if last is None else last - offset]
        # One page per packet after the headers; granule positions in 48 kHz samples including the pre-skip; the last
        # page carries the whole encode's final granule (its end trimming).
        pre_skip = struct.unpack("<H", head[10:12])[0]
        pages = [ogg_page(1, 0, 0, [head], header_type=2), ogg_page(1, 1, 0, [tags])]
        for index, packet in enumerate(joined):
            final = index == len(joined) - 1
            position = granule if final else (index + 1) * PACKET
            pages.append(ogg_page(1, index + 2, position, [packet], header_type=4 if final else 0))
        path = os.path.join(work, f"joined{count}.ogg")
        open(path, "wb").write(b"".join(pages))
        decoded = decode(path)
        n = min(len(decoded), len(reference))
        difference = decoded[:n] - reference[:n]
        splice = max((np.abs(decoded[q - 1024:q + 1024]).max() for q in splits), default=0.0)
        there = max((np.abs(reference[q - 1024:q + 1024]).max() for q in splits), default=0.0)
        own = reference[:len(pcm)] - pcm[:len(reference)]
        mine = decoded[:len(pcm)] - pcm[:len(decoded)]
        print(f"{count} pieces: {len(joined)} packets, {len(decoded)} decoded samples "
              f"({'same' if len(decoded) == len(reference) else 'DIFFERENT'}), pre-skip {pre_skip}; joined vs one encoder: "
              f"max {np.abs(difference).max():.5f}, RMS {np.sqrt((difference ** 2).mean()):.6f}; codec noise vs PCM RMS: one "
              f"encoder {np.sqrt((own ** 2).mean()):.6f}, joined {np.sqrt((mine ** 2).mean()):.6f}; largest |sample| "
              f"within ±1,024 of a splice: {splice:.6f} (one encoder there: {there:.6f})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""An independent PNG reader (Python's zlib only) for the picture tests.

usage: png_columns.py FILE.png TOP BOTTOM
prints JSON: {"width", "height", "columns": [[colours other than the background, as rrggbb, in rows TOP..BOTTOM], ...],
              "extents": [[first row, last row] of those pixels, or null], "background": "rrggbb"}"""
import json, struct, sys, zlib

path, top, bottom = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
offset, chunks = 8, {}
while offset < len(data):
    length, kind = struct.unpack(">I4s", data[offset:offset + 8])
    chunks.setdefault(kind, []).append(data[offset + 8:offset + 8 + length])
    offset += 12 + length
width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"][0])
assert depth == 8 and interlace == 0 and colour_type in (2, 6), f"unsupported PNG: depth {depth}, type {colour_type}"
channels = 3 if colour_type == 2 else 4
raw = zlib.decompress(b"".join(chunks[b"IDAT"]))
stride = width * channels
rows, previous, position = [], bytearray(stride), 0
for _ in range(height):
    kind, line = raw[position], bytearray(raw[position + 1:position + 1 + stride])
    position += 1 + stride
    for i in range(stride):
        left = line[i - channels] if i >= channels else 0
        up, corner = previous[i], previous[i - channels] if i >= channels else 0
        if kind == 1: line[i] = (line[i] + left) & 255
        elif kind == 2: line[i] = (line[i] + up) & 255
        elif kind == 3: line[i] = (line[i] + (left + up) // 2) & 255
        elif kind == 4:
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
    rows.append(line)
    previous = line
pixel = lambda x, y: "%02x%02x%02x" % tuple(rows[y][x * channels:x * channels + 3])
background = pixel(0, height - 1 - 20) if height > 40 else pixel(0, 0)
columns, extents = [], []
for x in range(width):
    colours, first, last = set(), None, None
    for y in range(top, bottom + 1):
        colour = pixel(x, y)
        if colour != background:
            colours.add(colour)
            first = y if first is None else first
            last = y
    columns.append(sorted(colours))
    extents.append(None if first is None else [first, last])
print(json.dumps({"width": width, "height": height, "columns": columns, "extents": extents, "background": background}))

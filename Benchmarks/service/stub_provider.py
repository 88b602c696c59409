#!/usr/bin/env python3
"""A local TTS provider speaking OpenAI's POST /v1/audio/speech (response_format pcm: 24 kHz 16-bit mono),
answering each request LATENCY seconds after it arrived. For measuring the service, never part of it.

usage: stub_provider.py PORT LATENCY
"""
import json, math, struct, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT, LATENCY = int(sys.argv[1]), float(sys.argv[2])
lock, count = threading.Lock(), [0]


def speech(text):
    """A voiced-sounding signal, 50 ms per character, syllable-shaped."""
    rate, frames = 24000, max(7200, int(len(text) * 0.05 * 24000))
    out = bytearray()
    for n in range(frames):
        envelope = abs(math.sin(math.pi * n / (rate * 0.22)))
        value = 0.3 * envelope * (math.sin(2 * math.pi * 140 * n / rate) + 0.5 * math.sin(2 * math.pi * 280 * n / rate))
        out += struct.pack("<h", int(max(-1, min(1, value)) * 32767))
    return bytes(out)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        arrived = time.monotonic()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with lock:
            count[0] += 1
        try:
            text = json.loads(body)["input"]
        except Exception:
            self.send_response(400)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        audio = speech(text)
        time.sleep(max(0, LATENCY - (time.monotonic() - arrived)))
        self.send_response(200)
        self.send_header("Content-Type", "audio/pcm")
        self.send_header("Content-Length", str(len(audio)))
        self.end_headers()
        self.wfile.write(audio)

    def do_GET(self):
        payload = json.dumps({"requests": count[0]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()

#!/usr/bin/env python3
"""kill -9 the service at random moments, again and again, and check what it serves afterwards.

Each round starts `chorus serve` on one data dir (kept across rounds), sets renders (espeak text, some
repeated so the cache is hit, some new), clip uploads and downloads going, kills the process with SIGKILL
after a random 0.05-6 s, restarts it and checks:

  - no temporary (`.partial`) file is left anywhere in the data dir once it is up again and what it runs again has
    settled;
  - every render the service ever accepted (202) is `done` or `failed` (never unknown; one unfinished at the kill is
    run again after the restart, so it may be `queued`/`running` for a while — `resumed` counts those — but not
    stuck there for a minute),
    and every `done` one serves audio whose bytes match its ETag-length and which ffmpeg (the referee)
    decodes to exactly the manifest's sample count;
  - every clip the service ever accepted (201) can still be used in a render, or is refused cleanly;
  - every cached synthesis file decodes.

    Benchmarks/reliability/kill9.py [--rounds 100] [--seed 1] [--chorus .build/debug/chorus]

Prints a summary line per round and the totals that docs/reliability.md quotes. Exit status 1 on any violation.
"""
import argparse, json, os, random, signal, socket, struct, subprocess, sys, tempfile, threading, time, urllib.request, urllib.error

from harness import decoded_frames, free_port
import harness

KEY = "kill9-" + os.urandom(8).hex()


def call(port, method, path, body=None, headers=None, timeout=30):
    return harness.call(KEY, port, method, path, body, headers, timeout)


def wav(seconds=1.0, rate=16000, frequency=330.0):
    import math
    frames = int(seconds * rate)
    samples = b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * frequency * n / rate))) for n in range(frames))
    return b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16) \
        + b"data" + struct.pack("<I", len(samples)) + samples


class Server:
    def __init__(self, chorus, data):
        self.chorus, self.data, self.process, self.port = chorus, data, None, None

    def start(self):
        self.port = free_port()
        env = dict(os.environ, CHORUS_API_KEYS=KEY)
        self.log = open(os.path.join(os.path.dirname(self.data), "serve.log"), "a")
        self.process = subprocess.Popen([self.chorus, "serve", "--port", str(self.port), "--data-dir", self.data, "--rate-limit", "0", "--key-renders", "16"],
                                        env=env, stdout=self.log, stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if call(self.port, "GET", "/health", timeout=2)[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("the service did not start")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.log.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chorus", default=".build/debug/chorus")
    args = parser.parse_args()
    random.seed(args.seed)
    root = tempfile.mkdtemp(prefix="chorus-kill9-")
    data = os.path.join(root, "data")
    binary = os.path.join(root, "chorus")   # a copy: a rebuild meanwhile must not pull the file away
    subprocess.run(["cp", os.path.abspath(args.chorus), binary], check=True)
    server = Server(binary, data)
    accepted_renders, accepted_clips, checked_done = set(), set(), set()
    clip_bytes = wav()
    totals = dict(rounds=0, renders_accepted=0, clips_accepted=0, done=0, failed=0, lost=0, resumed=0, partial_files=0, stuck=0,
                  corrupt_served=0, cache_entries=0, cache_undecodable=0, clips_unusable=0)
    violations = []
    phrases = ["Dinner at seven.", "Who is picking up Maya?", "I will, after work.", "Bring the cake, please."]

    for round_number in range(args.rounds):
        server.start()
        port = server.port
        lock = threading.Lock()

        def render_worker(seed):
            rng = random.Random(seed)
            while True:
                messages = [{"speaker": rng.choice(["Mom", "Dad", "Maya"]),
                             "text": rng.choice(phrases) if rng.random() < 0.6 else f"Round {round_number} message {rng.randrange(10**6)}.",
                             "voice": "espeak:en-us"} for _ in range(rng.randint(1, 4))]
                try:
                    status, body, _ = call(port, "POST", "/v1/renders", json.dumps({"messages": messages}).encode(),
                                           {"Content-Type": "application/json", "Prefer": "respond-async"}, timeout=10)
                except OSError:
                    return
                if status in (200, 201, 202):
                    with lock:
                        accepted_renders.add(json.loads(body)["id"])
                time.sleep(rng.uniform(0.1, 0.5))

        def clip_worker():
            while True:
                try:
                    status, body, _ = call(port, "POST", "/v1/clips", clip_bytes, {"Content-Type": "application/octet-stream"}, timeout=10)
                except OSError:
                    return
                if status in (200, 201):
                    with lock:
                        accepted_clips.add(json.loads(body)["id"])

        def download_worker():
            while True:
                with lock:
                    done = list(checked_done)
                if not done:
                    time.sleep(0.05)
                try:
                    if done:
                        call(port, "GET", f"/v1/renders/{random.choice(done)}/audio", timeout=10)
                    else:
                        call(port, "GET", "/health", timeout=10)
                except OSError:
                    return

        workers = [threading.Thread(target=render_worker, args=(round_number * 10 + n,), daemon=True) for n in range(2)]
        workers += [threading.Thread(target=clip_worker, daemon=True), threading.Thread(target=download_worker, daemon=True)]
        for worker in workers:
            worker.start()
        time.sleep(random.uniform(0.05, 6.0))
        server.kill()
        for worker in workers:
            worker.join(timeout=15)

        # Up again: what does it serve?
        server.start()
        port = server.port
        for render in sorted(accepted_renders):
            status, manifest, resumed = settled(port, render)
            totals["resumed"] += resumed
            state = manifest.get("status")
            if status == 404:
                violations.append(f"round {round_number}: render {render} was accepted, now unknown (404)")
            if state in ("queued", "running"):
                totals["stuck"] += 1
                violations.append(f"round {round_number}: render {render} is still {state} a minute after a restart")
            if state == "done" and render not in checked_done:
                status, audio, headers = call(port, "GET", f"/v1/renders/{render}/audio")
                path = os.path.join(root, "check.audio")
                with open(path, "wb") as handle:
                    handle.write(audio)
                frames = decoded_frames(path)
                if status != 200 or frames != manifest.get("samples"):
                    totals["corrupt_served"] += 1
                    violations.append(f"round {round_number}: render {render} serves {status}, {frames} frames, manifest {manifest.get('samples')}")
                checked_done.add(render)
        # Once the renders run again after the restart have settled (while they run, their outputs are being written
        # under temporary names): no temporary file is left anywhere.
        partial = [os.path.join(d, f) for d, _, files in os.walk(data) for f in files if f.endswith(".partial")]
        totals["partial_files"] += len(partial)
        if partial:
            violations.append(f"round {round_number}: partial files after restart: {partial[:3]}")
        for clip in sorted(accepted_clips)[-3:]:
            status, body, _ = call(port, "POST", "/v1/renders", json.dumps({"messages": [{"speaker": "Clip", "clip": clip}]}).encode(),
                                   {"Content-Type": "application/json"}, timeout=60)
            if status not in (200, 201):
                totals["clips_unusable"] += 1
                violations.append(f"round {round_number}: clip {clip} → {status} {body[:200]!r}")
        server.kill()
        totals["rounds"] += 1
        print(f"round {round_number}: {len(accepted_renders)} renders and {len(accepted_clips)} clips accepted so far; "
              f"{len(checked_done)} done renders verified; partial files {len(partial)}", flush=True)

    # Final pass over everything stored.
    server.start()
    for render in sorted(accepted_renders):
        status, manifest, _ = settled(server.port, render)
        state = manifest.get("status")
        totals["done" if state == "done" else "failed" if state == "failed" else "stuck" if state in ("queued", "running") else "lost"] += 1
        if state not in ("done", "failed"):
            violations.append(f"render {render} accepted, now {status} {state}")
    server.process.send_signal(signal.SIGTERM)
    server.process.wait()
    cache = [os.path.join(d, f) for d, _, files in os.walk(os.path.join(data, "cache")) for f in files
             if f.rsplit(".", 1)[-1] in ("mp3", "wav", "ogg", "opus", "flac", "m4a", "pcm")]
    totals["cache_entries"] = len(cache)
    for path in cache:
        if not path.endswith(".pcm") and decoded_frames(path) <= 0:
            totals["cache_undecodable"] += 1
            violations.append(f"cache entry does not decode: {path}")
    totals["renders_accepted"], totals["clips_accepted"] = len(accepted_renders), len(accepted_clips)
    print(json.dumps(totals, indent=1))
    for violation in violations[:20]:
        print("VIOLATION", violation)
    print(f"data dir: {data}")
    sys.exit(1 if violations else 0)


def settled(port, render, seconds=60):
    """The render's status and manifest once it is neither queued nor running: a render accepted and unfinished at
    the kill is run again after the restart (chorus.sqlite keeps its request), so it may still be under way."""
    deadline = time.time() + seconds
    waited = False
    while True:
        status, body, _ = call(port, "GET", f"/v1/renders/{render}")
        manifest = json.loads(body) if status == 200 else {}
        if manifest.get("status") not in ("queued", "running") or time.time() > deadline:
            return status, manifest, waited
        waited = True
        time.sleep(0.2)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""SIGTERM during 20 in-flight renders: every one finishes or is reported failed, none is lost, exit 0 in time.

Each round starts `chorus serve` (2 workers) on a fresh data dir, submits 20 asynchronous renders (espeak, 3-6
new messages each, so every one really renders), starts 2 synchronous renders and one SSE listener, waits until
renders are running, sends SIGTERM and checks:

  - the process exits with status 0 within the shutdown timeout (+ 0.5 s for the process to be reaped);
  - while it drains, a new render is refused with 503 + Retry-After (or the port is already closed);
  - each synchronous caller gets an answer: 201 with the render, or a JSON error (503) - never a cut connection;
  - the SSE listener's stream ends (with `done` or an `error` event), it does not hang;
  - after a restart on the same data dir, each of the 20 renders is `done` (its audio decodes, ffmpeg as the
    referee, to exactly the manifest's sample count) or `failed` with a message; none is `queued`/`running`
    or missing; no `.partial` file is left.

Rounds alternate a generous shutdown timeout (120 s: all 20 should finish) and a short one (3 s: most are
cancelled and must be reported failed).

    Benchmarks/reliability/sigterm.py [--rounds 4] [--chorus .build/debug/chorus]

Exit status 1 on any violation.
"""
import argparse, json, os, signal, socket, subprocess, sys, tempfile, threading, time, urllib.error, urllib.request

from harness import decoded_frames, free_port
import harness

KEY = "sigterm-" + os.urandom(8).hex()
RENDERS = 20


def call(port, method, path, body=None, headers=None, timeout=120):
    return harness.call(KEY, port, method, path, body, headers, timeout)


def render_body(round_number, index):
    words = ["bread", "oven", "school", "rain", "garden", "train", "letter", "music", "river", "candle"]
    messages = [{"speaker": ["Mom", "Dad", "Maya"][m % 3], "voice": "espeak:en-us",
                 "text": f"Round {round_number}, render {index}, message {m}: the {words[(index + m) % 10]} "
                         f"and the {words[(index * 3 + m) % 10]} are waiting for us at {index + m} o'clock."}
                for m in range(3 + index % 4)]
    return json.dumps({"messages": messages}).encode()


def start(binary, data, shutdown_timeout, log):
    port = free_port()
    process = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", data, "--rate-limit", "0", "--key-renders", "64",
                                "--workers", "2", "--shutdown-timeout", f"{shutdown_timeout}s"],
                               env=dict(os.environ, CHORUS_API_KEYS=KEY), stdout=log, stderr=log)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if call(port, "GET", "/health", timeout=2)[0] == 200:
                return process, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the service did not start")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--chorus", default=".build/debug/chorus")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="chorus-sigterm-")
    binary = os.path.join(root, "chorus")   # a copy: a rebuild meanwhile must not pull the file away
    subprocess.run(["cp", os.path.abspath(args.chorus), binary], check=True)
    violations, rows = [], []

    for round_number in range(args.rounds):
        timeout = 120 if round_number % 2 == 0 else 3
        data = os.path.join(root, f"data-{round_number}")
        log = open(os.path.join(root, f"serve-{round_number}.log"), "w")
        process, port = start(binary, data, timeout, log)
        ids = []
        for index in range(RENDERS):
            status, body, _ = call(port, "POST", "/v1/renders", render_body(round_number, index),
                                   {"Content-Type": "application/json", "Prefer": "respond-async"})
            if status != 202:
                violations.append(f"round {round_number}: render {index} not accepted: {status} {body[:200]!r}")
                continue
            ids.append(json.loads(body)["id"])

        sync_results, events = [], {}

        def synchronous(index):
            try:
                status, body, _ = call(port, "POST", "/v1/renders", render_body(round_number, 100 + index), {"Content-Type": "application/json"})
                error = json.loads(body).get("error", {}).get("code") if status >= 400 else None
                sync_results.append((status, error))
            except OSError as error:   # a cut connection
                sync_results.append(("cut", str(error)))

        def listen(render):
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/renders/{render}/events")
            request.add_header("Authorization", f"Bearer {KEY}")
            kinds = []
            try:
                with urllib.request.urlopen(request, timeout=120) as stream:
                    for line in stream:
                        if line.startswith(b"event:"):
                            kinds.append(line[6:].strip().decode())
                events["ended"] = True
            except OSError as error:
                events["error"] = str(error)
            events["kinds"] = kinds

        threads = [threading.Thread(target=synchronous, args=(n,)) for n in range(2)]
        threads.append(threading.Thread(target=listen, args=(ids[-1],)))
        for thread in threads:
            thread.start()
        # Wait until renders are running (at most 10 s), then SIGTERM.
        deadline = time.time() + 10
        while time.time() < deadline:
            status, body, _ = call(port, "GET", f"/v1/renders/{ids[0]}")
            if status == 200 and json.loads(body)["status"] != "queued":
                break
            time.sleep(0.05)
        before = {render: json.loads(call(port, "GET", f"/v1/renders/{render}")[1])["status"] for render in ids}
        signalled = time.time()
        process.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        try:
            status, body, headers = call(port, "POST", "/v1/renders", render_body(round_number, 999), {"Content-Type": "application/json"}, timeout=10)
            refused = f"{status} Retry-After={headers.get('Retry-After')}"
            if status != 503 or not headers.get("Retry-After"):
                violations.append(f"round {round_number}: a render during the drain got {status} {body[:200]!r}")
        except OSError:
            refused = "port closed"
        try:
            code = process.wait(timeout=timeout + 5)
        except subprocess.TimeoutExpired:
            process.kill()
            code = "hung"
        exit_seconds = time.time() - signalled
        for thread in threads:
            thread.join(timeout=30)
        log.close()
        if code != 0 or exit_seconds > timeout + 0.5:
            violations.append(f"round {round_number}: exit status {code} after {exit_seconds:.1f} s")
        for result in sync_results:
            if result[0] == "cut" or (result[0] not in (200, 201) and result[1] is None):
                violations.append(f"round {round_number}: a synchronous caller got {result}")
        if "ended" not in events or not events.get("kinds") or events["kinds"][-1] not in ("done", "error"):
            violations.append(f"round {round_number}: the event stream {events}")

        # Up again: where is each render?
        log = open(os.path.join(root, f"serve-{round_number}-after.log"), "w")
        process, port = start(binary, data, timeout, log)
        done = failed = 0
        for render in ids:
            status, body, _ = call(port, "GET", f"/v1/renders/{render}")
            manifest = json.loads(body) if status == 200 else {}
            state = manifest.get("status")
            if state == "done":
                status, audio, _ = call(port, "GET", f"/v1/renders/{render}/audio")
                path = os.path.join(root, "check.audio")
                with open(path, "wb") as handle:
                    handle.write(audio)
                frames = decoded_frames(path)
                if status != 200 or frames != manifest.get("samples"):
                    violations.append(f"round {round_number}: render {render} serves {status}, {frames} frames, manifest {manifest.get('samples')}")
                done += 1
            elif state == "failed" and manifest.get("error", {}).get("message"):
                failed += 1
            else:
                violations.append(f"round {round_number}: render {render} is {status} {state} after the restart: {body[:200]!r}")
        partial = [os.path.join(d, f) for d, _, files in os.walk(data) for f in files if f.endswith(".partial")]
        if partial:
            violations.append(f"round {round_number}: partial files: {partial[:3]}")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        log.close()
        running = sum(1 for s in before.values() if s == "running")
        row = dict(round=round_number, shutdown_timeout=timeout, running_at_sigterm=running,
                   queued_at_sigterm=sum(1 for s in before.values() if s == "queued"), done_before=sum(1 for s in before.values() if s == "done"),
                   exit_status=code, exit_seconds=round(exit_seconds, 2), during_drain=refused,
                   synchronous=[r[0] if r[1] is None else f"{r[0]} {r[1]}" for r in sync_results],
                   events_end=(events.get("kinds") or ["none"])[-1], done=done, failed=failed, lost=len(ids) - done - failed, partial=len(partial))
        rows.append(row)
        print(json.dumps(row), flush=True)

    for violation in violations[:20]:
        print("VIOLATION", violation)
    print(f"{len(rows)} rounds, {len(violations)} violations; logs in {root}")
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()

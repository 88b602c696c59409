#!/usr/bin/env python3
"""The data dir filling up under `chorus serve`: a small tmpfs as the data dir, renders and clip uploads until
it is full, then checks what the issue asks — `507 insufficient_storage` (with Retry-After, no server path),
nothing partial or corrupt left, the stored renders still served byte for byte (whole and ranges), health
answering — and that deleting renders frees room and new renders succeed again. Needs root (mount).

    sudo Benchmarks/reliability/disk_full.py [--size-mb 16] [--binary .build/debug/chorus]
"""
import argparse, json, os, random, shutil, signal, sqlite3, subprocess, sys, tempfile, time, urllib.error, urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--size-mb", type=int, default=16)
parser.add_argument("--binary", default=".build/debug/chorus")
args = parser.parse_args()
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
if os.geteuid() != 0:
    sys.exit("disk_full.py: needs root to mount a tmpfs (run it with sudo)")

work = tempfile.mkdtemp(prefix="chorus-diskfull-")
data = os.path.join(work, "data")
os.makedirs(data)
subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.size_mb}m", "tmpfs", data], check=True)
binary = os.path.join(work, "chorus")
shutil.copy(args.binary, binary)
port = random.randint(20000, 40000)
key = "diskfull-" + os.urandom(8).hex()
log = open(os.path.join(work, "serve.log"), "w")
server = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", data, "--rate-limit", "0", "--key-renders", "64"],
                          env={**os.environ, "CHORUS_API_KEYS": key}, stdout=log, stderr=subprocess.STDOUT)
base = f"http://127.0.0.1:{port}"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def call(method, path, body=None, headers=None, content_type="application/json"):
    request = urllib.request.Request(base + path, data=body, method=method, headers={"Authorization": f"Bearer {key}", **(headers or {})})
    if body is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def render(text):
    body = json.dumps({"messages": [{"speaker": "Ann", "text": text, "voice": "espeak:en-us"}],
                       "output": {"format": "wav", "sample_rate": 48000, "channels": 2}}).encode()
    return call("POST", "/v1/renders", body)


def partials():
    found = []
    for root, _, files in os.walk(data):
        found += [os.path.join(root, name) for name in files if ".partial" in name or name.startswith(".tmp")]
    return found


try:
    for _ in range(100):
        try:
            urllib.request.urlopen(base + "/health", timeout=1)
            break
        except Exception:
            time.sleep(0.2)
    # One render stored while there is room: it must keep playing, byte for byte.
    status, _, body = render("The render stored before the disk filled up, which must keep playing.")
    check(status == 201, f"first render: {status} {body[:200]}")
    first = json.loads(body)["id"]
    _, _, first_audio = call("GET", f"/v1/renders/{first}/audio")

    statuses = {}
    stored = []
    refused = None
    count = 0
    while count < 60:
        count += 1
        status, headers, body = render(f"Filling the disk, render number {count}, " + "with a long sentence to make the file larger. " * 6)
        statuses[status] = statuses.get(status, 0) + 1
        if status == 201:
            stored.append(json.loads(body)["id"])
        if status != 201:
            refused = (status, headers, body)
            break
    check(refused is not None, f"the disk never filled after {count} renders")
    if refused:
        status, headers, body = refused
        error = json.loads(body).get("error", {})
        print(f"render refused after {count - 1} stored: {status} {error}")
        check(status == 507 and error.get("code") == "insufficient_storage", f"a full disk answered {status} {error}")
        check("Retry-After" in headers, "no Retry-After on 507")
        check(data not in body.decode(errors="replace") and "/tmp" not in body.decode(errors="replace"), "a server path in the error")
    # A clip upload on the full disk.
    clip = subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=330:duration=20", "-ac", "2", "-ar", "48000",
                           "-f", "wav", "-"], capture_output=True, check=True).stdout
    status, headers, body = call("POST", "/v1/clips", clip, content_type="audio/wav")
    print(f"clip upload on the full disk: {status} {body[:160]}")
    check(status == 507, f"a clip upload on the full disk answered {status}")
    # Still serving what is stored.
    status, _, audio = call("GET", f"/v1/renders/{first}/audio")
    check(status == 200 and audio == first_audio, f"the stored render changed or is not served: {status}, {len(audio)} bytes")
    status, _, part = call("GET", f"/v1/renders/{first}/audio", headers={"Range": "bytes=100-1099"})
    check(status == 206 and part == first_audio[100:1100], f"a range of the stored render: {status}")
    status, _, _ = call("GET", "/health")
    check(status == 200, f"health on a full disk: {status}")
    check(not partials(), f"partial files left: {partials()}")
    # Every render folder holds either a finished render whose audio decodes or no audio at all.
    renders_dir = os.path.join(data, "renders")
    done = failed = 0
    # The records are in the data folder's SQLite database (read here by Python, not by Chorus).
    database = sqlite3.connect(f"file:{os.path.join(data, 'chorus.sqlite')}?mode=ro", uri=True)
    records = dict(database.execute("SELECT id, status FROM renders").fetchall())
    database.close()
    for render_id in os.listdir(renders_dir):
        folder = os.path.join(renders_dir, render_id)
        names = os.listdir(folder)
        status_text = f'"{records.get(render_id, "")}"'
        audio_files = [name for name in names if name.startswith("audio.")]
        if '"done"' in status_text and audio_files:
            done += 1
            probe = subprocess.run(["ffmpeg", "-v", "error", "-i", os.path.join(folder, audio_files[0]), "-f", "null", "-"], capture_output=True)
            check(probe.returncode == 0 and not probe.stderr, f"{render_id}: stored audio does not decode cleanly")
        else:
            failed += 1
            check(not audio_files, f"{render_id}: not done but holds {audio_files}")
    print(f"render folders: {done} done (audio decodes), {failed} without audio; responses while filling: {statuses}")
    # Room again: a render as large as the one refused still fails while the disk is full; after deleting the
    # filler renders it succeeds.
    again = f"Filling the disk, render number {count}, " + "with a long sentence to make the file larger. " * 6
    status, _, _ = render(again)
    check(status == 507, f"the refused render, retried on the still full disk: {status}")
    deleted = sum(call("DELETE", f"/v1/renders/{render_id}")[0] in (200, 204) for render_id in stored)
    check(deleted == len(stored), f"deleted {deleted} of {len(stored)} filler renders")
    status, _, body = render(again)
    print(f"after deleting {deleted} renders: {status}")
    check(status == 201, f"no recovery after deleting renders: {status} {body[:200]}")
    check(server.poll() is None, "the service died")
    print("5xx other than 507 in the log:", sum(1 for line in open(os.path.join(work, "serve.log"))
                                                   if '"status":"5' in line and '"status":"507"' not in line))
finally:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
    subprocess.run(["umount", data])
    shutil.rmtree(work, ignore_errors=True)

print("disk full:", "OK" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)

#!/usr/bin/env python3
"""Slowloris at scale: thousands of connections dripping a request head one byte a second.

Starts `chorus serve` (a fresh data dir, one stored render), then opens --connections sockets that each
send a partial request head and then one more byte every second, re-opening any the service closes (a
sustained attack), for --seconds. Meanwhile a probe asks for `/health`, the render's manifest and a byte range
of its audio every 100 ms on fresh connections. Reports:

  - how long the service let a dripping connection live (it should close each after --idle-timeout);
  - the probe's answers: count, errors, p50/p99/max latency - legitimate clients must stay served;
  - the service's open file descriptors and RSS at the start, at the peak and after the attack.

    Benchmarks/reliability/slowloris.py [--connections 2000] [--seconds 60] [--idle-timeout 10] [--chorus .build/debug/chorus]

Exit status 1 when a probe fails, a dripping connection outlives the idle timeout by more than 5 s, or the
service ends.
"""
import argparse, errno, json, os, random, socket, statistics, subprocess, sys, tempfile, threading, time, urllib.request

KEY = "slowloris-" + os.urandom(8).hex()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(port, path, headers=None, timeout=10):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    request.add_header("Authorization", f"Bearer {KEY}")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, response.read()


def process_figures(pid):
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    with open(f"/proc/{pid}/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) // 1024
    return fds, rss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--idle-timeout", type=float, default=10)
    parser.add_argument("--chorus", default=".build/debug/chorus")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="chorus-slowloris-")
    port = free_port()
    log = open(os.path.join(root, "serve.log"), "w")
    server = subprocess.Popen([os.path.abspath(args.chorus), "serve", "--port", str(port), "--data-dir", os.path.join(root, "data"),
                               "--rate-limit", "0", "--idle-timeout", f"{args.idle_timeout}s"],
                              env=dict(os.environ, CHORUS_API_KEYS=KEY), stdout=log, stderr=log)
    deadline = time.time() + 30
    while True:
        try:
            if call(port, "/health", timeout=2)[0] == 200:
                break
        except OSError:
            if time.time() > deadline:
                raise SystemExit("the service did not start")
            time.sleep(0.05)
    body = json.dumps({"messages": [{"speaker": "A", "voice": "espeak:en-us", "text": "Still here, still answering."}]}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/renders", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        render = json.loads(response.read())["id"]
    start_fds, start_rss = process_figures(server.pid)

    # The attack: one thread, non-blocking sockets, a byte per connection per second.
    head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: "
    connections = {}   # socket -> opened at
    headless = set()   # connected sockets that have not sent the start of the head yet
    lifetimes, refused = [], 0
    stop = threading.Event()
    peak = {"fds": start_fds, "rss": start_rss, "open": 0}

    def open_one():
        nonlocal refused
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
            s.close()
            return
        connections[s] = time.time()
        headless.add(s)

    def attack():
        while not stop.is_set():
            tick = time.time()
            while len(connections) < args.connections and not stop.is_set():
                open_one()
            for s, opened in list(connections.items()):
                try:
                    alive = True
                    try:
                        if s.recv(1024) == b"":
                            alive = False
                    except BlockingIOError:
                        pass
                    if alive:
                        if s in headless:
                            s.send(head)
                            headless.discard(s)
                        else:
                            s.send(b"a")
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError as error:
                    alive = error.errno == errno.ENOTCONN   # still connecting (the accept queue is full)
                if not alive:
                    lifetimes.append(time.time() - opened)
                    del connections[s]
                    headless.discard(s)
                    s.close()
            peak["open"] = max(peak["open"], len(connections))
            try:
                fds, rss = process_figures(server.pid)
                peak["fds"], peak["rss"] = max(peak["fds"], fds), max(peak["rss"], rss)
            except (FileNotFoundError, StopIteration):
                pass
            stop.wait(max(0, 1 - (time.time() - tick)))

    latencies, failures = [], []

    def probe():
        paths = [("/health", None), (f"/v1/renders/{render}", None), (f"/v1/renders/{render}/audio", {"Range": "bytes=100-4195"})]
        while not stop.is_set():
            path, headers = random.choice(paths)
            began = time.time()
            try:
                status, data = call(port, path, headers)
                if status not in (200, 206):
                    failures.append(f"{path}: {status}")
                latencies.append(time.time() - began)
            except OSError as error:
                failures.append(f"{path}: {error}")
            stop.wait(0.1)

    threads = [threading.Thread(target=attack), threading.Thread(target=probe)]
    for thread in threads:
        thread.start()
    time.sleep(args.seconds)
    stop.set()
    for thread in threads:
        thread.join()
    for s in connections:
        s.close()
    time.sleep(2)
    alive = server.poll() is None
    end_fds, end_rss = process_figures(server.pid) if alive else (None, None)
    server.terminate()
    server.wait(timeout=60)
    log.close()

    latencies.sort()
    closed_by_server = [t for t in lifetimes]
    result = dict(connections=args.connections, seconds=args.seconds, idle_timeout=args.idle_timeout,
                  peak_open=peak["open"], opened=len(lifetimes) + len(connections), closed_by_service=len(closed_by_server), refused=refused,
                  lifetime_median=round(statistics.median(closed_by_server), 1) if closed_by_server else None,
                  lifetime_max=round(max(closed_by_server), 1) if closed_by_server else None,
                  probes=len(latencies), probe_failures=len(failures),
                  probe_p50_ms=round(1000 * latencies[len(latencies) // 2], 1) if latencies else None,
                  probe_p99_ms=round(1000 * latencies[int(len(latencies) * 0.99)], 1) if latencies else None,
                  probe_max_ms=round(1000 * latencies[-1], 1) if latencies else None,
                  fds=f"{start_fds} -> {peak['fds']} (peak) -> {end_fds}", rss_mb=f"{start_rss} -> {peak['rss']} (peak) -> {end_rss}",
                  service_alive=alive)
    print(json.dumps(result, indent=1))
    for failure in failures[:10]:
        print("PROBE FAILURE", failure)
    bad = failures or not alive or (closed_by_server and max(closed_by_server) > args.idle_timeout + 5) or not closed_by_server
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

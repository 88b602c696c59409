"""Shared jobs (`--database`), measured through the service on this machine: a throwaway PostgreSQL (the tests'
cluster script, with pg_stat_statements), a shared folder, release builds of `chorus serve` with espeak voices.

1. Claim-to-start latency: instance A's one worker is kept busy by a long render; N short renders are sent to A one
   after another, so each is claimed by B (woken by NOTIFY): queued_at → started_at, as the database's clock says.
2. 200 concurrent renders (distinct texts, espeak) sent at once, alternating between 2 instances, vs the same 200 sent
   to 1 instance: wall time; then per render, the database statements (pg_stat_statements, idle polling included)
   and the bytes stored (row, table with indexes, files in the shared folder).

    python3 Benchmarks/service/jobs.py [N=100] [CHORUS=.build/release/chorus]
"""
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHORUS = os.environ.get("CHORUS", os.path.join(ROOT, ".build/release/chorus"))
N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
KEY = "bench-key-0123456789abcdef"
work = tempfile.mkdtemp(prefix="chorus-jobs-bench-")
processes = []

pg = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests/ChorusTestSupport/pg_server.py")], stdin=subprocess.PIPE,
                      stdout=subprocess.PIPE, stderr=open(os.path.join(work, "pg.log"), "w"),
                      env=dict(os.environ, PG_SERVER_SETTINGS="shared_preload_libraries=pg_stat_statements"))
started = json.loads(pg.stdout.readline())
base = f"postgres://{started['user']}:{started['password']}@127.0.0.1:{started['port']}"


def psql(database, sql):
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-d", f"{base}/{database}", "-c", sql], check=True, capture_output=True,
                          text=True).stdout.strip()


def database(name):
    psql("postgres", f"CREATE DATABASE {name}")
    psql(name, "CREATE EXTENSION pg_stat_statements")
    return f"{base}/{name}?sslmode=disable"


port = [18900]


def serve(url, shared, name, workers=None):
    port[0] += 1
    arguments = [CHORUS, "serve", "--port", str(port[0]), "--data-dir", os.path.join(work, name), "--storage", shared, "--database", url,
                 "--default-voices", "espeak", "--rate-limit", "0", "--key-renders", "1000", "--queue", "1000"]
    if workers:
        arguments += ["--workers", str(workers)]
    process = subprocess.Popen(arguments, env=dict(os.environ, CHORUS_API_KEYS=KEY), stdout=open(os.path.join(work, name + ".log"), "w"),
                               stderr=subprocess.STDOUT)
    processes.append(process)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port[0]}/health", timeout=1)
            return port[0]
        except OSError:
            time.sleep(0.1)
    sys.exit(f"instance {name} did not start")


def post(port, messages, asynchronous=False):
    body = json.dumps({"messages": [{"speaker": f"S{i % 2}", "text": text} for i, text in enumerate(messages)]}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/renders", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json",
                                              **({"Prefer": "respond-async"} if asynchronous else {})})
    with urllib.request.urlopen(request, timeout=600) as response:
        return response.status, json.loads(response.read())


def stop():
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait()
    processes.clear()


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


try:
    # 1. Claim-to-start latency.
    url = database("claims")
    shared = os.path.join(work, "shared-claims")
    a = serve(url, shared, "claims-a", workers=1)
    b = serve(url, shared, "claims-b", workers=1)
    long_messages = [" ".join(f"Sentence {i}.{j} of a long render that keeps instance A busy." for j in range(5)) for i in range(150)]
    status, busy = post(a, long_messages, asynchronous=True)
    time.sleep(0.5)
    ids = []
    for index in range(N):
        status, manifest = post(a, [f"Short render number {index}."])
        assert status in (200, 201) and manifest["status"] == "done", manifest
        ids.append(manifest["id"])
    rows = psql("claims", "SELECT extract(epoch FROM started_at - queued_at) * 1000 FROM chorus_renders WHERE id IN ("
                + ",".join(f"'{i}'" for i in ids) + ")").split()
    waits = [float(x) for x in rows]
    owners = psql("claims", "SELECT count(DISTINCT owner) FROM chorus_renders WHERE status = 'running'")
    print(f"claim-to-start, {len(waits)} renders queued on busy A and claimed by B: p50 {percentile(waits, 50):.1f} ms, "
          f"p99 {percentile(waits, 99):.1f} ms, max {max(waits):.1f} ms (A still running its long render: {owners} owner)")
    stop()

    # 2. 200 concurrent renders, 2 instances vs 1.
    def load(ports, label):
        name = f"load_{label}"
        url = database(name)
        shared = os.path.join(work, "shared-" + label)
        instances = [serve(url, shared, f"{label}-{i}") for i in range(ports)]
        psql(name, "SELECT pg_stat_statements_reset()")
        texts = [[f"Render {i} of the load, {label}: dinner is at seven.", f"Render {i}: I will bring the salad and the bread."]
                 for i in range(200)]
        begin = time.time()
        with concurrent.futures.ThreadPoolExecutor(max_workers=200) as pool:
            results = list(pool.map(lambda i: post(instances[i % len(instances)], texts[i]), range(200)))
        elapsed = time.time() - begin
        assert all(status in (200, 201) and manifest["status"] == "done" for status, manifest in results), [r for r in results if r[0] not in (200, 201)][:3]
        distinct = len({manifest["id"] for _, manifest in results})
        statements = psql(name, "SELECT sum(calls) FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())")
        top = psql(name, "SELECT calls, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) FROM pg_stat_statements WHERE dbid = "
                   "(SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY calls DESC LIMIT 8")
        row = psql(name, "SELECT avg(pg_column_size(t.*))::int FROM chorus_renders t")
        table = psql(name, "SELECT pg_total_relation_size('chorus_renders')")
        files = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(shared) for f in fs)
        claimed = {i: open(os.path.join(work, f"{label}-{i}.log")).read().count("render claimed") for i in range(ports)}
        stop()
        print(f"200 concurrent renders on {ports} instance(s): {elapsed:.1f} s ({distinct} distinct, claimed per instance {list(claimed.values())}); "
              f"database statements {int(statements)} ({int(statements) / 200:.1f} per render, polling included); "
              f"row {row} B, table+indexes {int(table) / 200:.0f} B per render; files {files / 200 / 1024:.0f} KiB per render")
        print("  most frequent statements:\n    " + top.replace("\n", "\n    "))
        return elapsed

    one = load(1, "one")
    two = load(2, "two")
    print(f"2 instances / 1 instance wall time: {two / one:.2f}")
finally:
    stop()
    pg.stdin.close()
    pg.wait()
    subprocess.run(["rm", "-rf", work])

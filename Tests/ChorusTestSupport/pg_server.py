"""A throwaway PostgreSQL cluster for the tests: initdb in a temporary folder, the server on 127.0.0.1 at a free
port, password authentication (scram-sha-256) for a user made here. PostgreSQL refuses to run as root: as root,
the cluster is made and run as the unprivileged user `nobody`. Prints one JSON line {"port", "user", "password"},
then serves until its standard input closes (the test process ended); then stops the server and deletes the folder.
Extra server settings (benchmarks): PG_SERVER_SETTINGS="name=value name=value".
"""

import os

# The test process spawns helpers and tools from many threads at once, and each child inherits the pipes open at that
# moment, another child's among them: held here for this helper's life, the write end of a tool's output pipe would
# keep the test reading it from ever seeing its end (a hang seen in CI). Only standard input, output and error stay.
os.closerange(3, os.sysconf("SC_OPEN_MAX"))
import glob
import json
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def tool(name):
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        sys.exit(f"{name} not found (apt-get install postgresql)")
    return found


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


user, password = "chorus", "chorus-test-db-password-5b1e"
root = tempfile.mkdtemp(prefix="chorus-pg-")
os.chmod(root, 0o755)
data = os.path.join(root, "data")
demote = None
if os.geteuid() == 0:
    nobody = pwd.getpwnam("nobody")
    os.chown(root, nobody.pw_uid, nobody.pw_gid)

    def demote():
        os.setgid(nobody.pw_gid)
        os.setgroups([])
        os.setuid(nobody.pw_uid)

password_file = os.path.join(root, "password")
with open(password_file, "w") as f:
    f.write(password)
if demote:
    os.chown(password_file, nobody.pw_uid, nobody.pw_gid)
environment = dict(os.environ, HOME=root, LC_ALL="C.UTF-8")
subprocess.run([tool("initdb"), "-D", data, "-U", user, "--pwfile", password_file, "-A", "scram-sha-256", "-E", "UTF8"],
               check=True, preexec_fn=demote, env=environment, stdout=subprocess.DEVNULL, cwd=root)
port = free_port()
server = subprocess.Popen([tool("postgres"), "-D", data, "-p", str(port), "-k", root, "-c", "listen_addresses=127.0.0.1",
                           "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
                           "-c", "max_connections=200"]
                          + [arg for setting in os.environ.get("PG_SERVER_SETTINGS", "").split() for arg in ("-c", setting)],
                          preexec_fn=demote, env=environment, stdout=subprocess.DEVNULL, cwd=root)
deadline = time.time() + 30
while time.time() < deadline:
    if server.poll() is not None:
        sys.exit("postgres exited at start")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("postgres did not start within 30 s")
print(json.dumps({"port": port, "user": user, "password": password}), flush=True)
try:
    sys.stdin.read()
finally:
    server.send_signal(2)  # fast shutdown
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
    shutil.rmtree(root, ignore_errors=True)

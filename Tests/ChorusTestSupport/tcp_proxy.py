"""A TCP proxy on 127.0.0.1 (a free port) to TARGET_PORT, which the tests cut and restore to make a server go away
and come back: reads lines on standard input, `down` (every connection is closed and new ones are closed at once),
`hang` (connections stay open but nothing passes, new ones are accepted and left waiting: a network that drops
packets) and `up`. Prints one JSON line {"port"}; ends when its standard input closes.
"""

import os

# The test process spawns helpers and tools from many threads at once, and each child inherits the pipes open at that
# moment, another child's among them: held here for this helper's life, the write end of a tool's output pipe would
# keep the test reading it from ever seeing its end (a hang seen in CI). Only standard input, output and error stay.
os.closerange(3, os.sysconf("SC_OPEN_MAX"))
import json
import socket
import sys
import threading
import time

target = int(sys.argv[1])
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(128)
lock = threading.Lock()
state = {"mode": "up", "open": set()}


def close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def mode():
    with lock:
        return state["mode"]


def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            while mode() == "hang":
                time.sleep(0.05)
            sink.sendall(data)
    except OSError:
        pass
    for sock in (source, sink):
        with lock:
            state["open"].discard(sock)
        close(sock)


def accept():
    while True:
        client, _ = listener.accept()
        while mode() == "hang":
            time.sleep(0.05)
        if mode() == "down":
            close(client)
            continue
        try:
            server = socket.create_connection(("127.0.0.1", target))
        except OSError:
            close(client)
            continue
        with lock:
            state["open"].update((client, server))
        threading.Thread(target=pump, args=(client, server), daemon=True).start()
        threading.Thread(target=pump, args=(server, client), daemon=True).start()


threading.Thread(target=accept, daemon=True).start()
print(json.dumps({"port": listener.getsockname()[1]}), flush=True)
for line in sys.stdin:
    command = line.strip()
    with lock:
        state["mode"] = command
        victims = list(state["open"]) if command == "down" else []
        if command == "down":
            state["open"].clear()
    for sock in victims:
        close(sock)
    print("ok", flush=True)

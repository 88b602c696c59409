"""A TCP proxy on 127.0.0.1 (a free port) to TARGET_PORT, which the tests cut and restore to make a server go away
and come back: reads lines on standard input, `down` (every connection is closed and new ones are closed at once)
and `up`. Prints one JSON line {"port"}; ends when its standard input closes.
"""
import json
import socket
import sys
import threading

target = int(sys.argv[1])
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(128)
lock = threading.Lock()
state = {"up": True, "open": set()}


def close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
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
        with lock:
            up = state["up"]
        if not up:
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
        state["up"] = command == "up"
        victims = list(state["open"]) if command == "down" else []
        if command == "down":
            state["open"].clear()
    for sock in victims:
        close(sock)
    print("ok", flush=True)

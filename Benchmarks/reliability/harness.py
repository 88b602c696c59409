"""What the reliability scripts share: a free loopback port, an authenticated call, and ffmpeg as the referee."""
import socket, subprocess, urllib.error, urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(key, port, method, path, body=None, headers=None, timeout=30):
    """(status, body, headers) of one request with `Authorization: Bearer key`; HTTP errors are answers, not raised."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, data=body)
    request.add_header("Authorization", f"Bearer {key}")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


def decoded_frames(path):
    """Frames ffmpeg decodes from `path` (mono), or -1 when it fails or warns."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "s16le", "-ac", "1", "-"], capture_output=True)
    return len(out.stdout) // 2 if out.returncode == 0 and not out.stderr.strip() else -1

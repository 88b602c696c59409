"""What the scripts that prepare models for Chorus share (prepare_piper.py, prepare_kokoro.py, prepare_speaker.py,
whisper_to_onnx.py): their error, reading JSON and ONNX files, checking a prepared graph, writing JSON, and writing
the output folder all at once.

A prepared folder is written into a temporary folder beside it (`.NAME-…`, mode 755) and renamed into place at the
end, so an interrupted run leaves no half-written folder: the old one stays until the new one is complete.
"""
import json
import os
import shutil
import tempfile


class PreparationError(Exception):
    """A file cannot be prepared: the message names the file and the reason."""


def read_json(path):
    """The JSON value in the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as error:
        raise PreparationError(f"{path}: cannot be read ({error.strerror})")
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise PreparationError(f"{path}: not JSON ({error})")


def read_bytes(path):
    """The file's bytes, or a PreparationError naming it."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise PreparationError(f"{path}: cannot be read ({error.strerror})")


def read_onnx(path):
    """The file's bytes and the ONNX model they hold (needs the onnx package)."""
    import onnx
    raw = read_bytes(path)
    try:
        model = onnx.load_from_string(raw)
    except Exception as error:  # onnx raises DecodeError and others for damaged files
        raise PreparationError(f"{path}: not an ONNX model ({type(error).__name__})")
    return raw, model


def check_onnx(model, path):
    """ONNX's checker on a prepared model (`path` names its source in the error)."""
    import onnx
    try:
        onnx.checker.check_model(model)
    except Exception as error:
        raise PreparationError(f"{path}: the prepared graph does not check ({error})")


def write_json(path, value, indent=2):
    """`value` as UTF-8 JSON (non-ASCII as it is) and a final newline."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=indent, ensure_ascii=False)
        handle.write("\n")


def write_folder(output, prefix, write, keep=()):
    """Writes the folder `output` all at once: `write(staging)` fills a new folder beside it (named `prefix` and a
    random tail), the subfolders `keep` names are moved over from the old `output`, the old one goes and the new one
    is renamed into place. Whatever fails, the staging folder is removed and what was moved over goes back to
    `output`."""
    parent = os.path.dirname(os.path.abspath(output))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=prefix, dir=parent)
    moved = []
    try:
        os.chmod(staging, 0o755)
        write(staging)
        for name in keep:
            if os.path.isdir(os.path.join(output, name)):
                moved.append(name)
                shutil.move(os.path.join(output, name), os.path.join(staging, name))
        if os.path.exists(output):
            shutil.rmtree(output)
        os.rename(staging, output)
    except BaseException:
        for name in moved:
            if os.path.isdir(os.path.join(staging, name)):
                os.makedirs(output, exist_ok=True)
                shutil.move(os.path.join(staging, name), os.path.join(output, name))
        shutil.rmtree(staging, ignore_errors=True)
        raise

#!/usr/bin/env python3
"""Converts Resemblyzer's GE2E speaker encoder (resemblyzer/pretrained.pt in PyPI's resemblyzer 0.1.4 wheel,
Apache-2.0) into an ONNX graph Chorus runs on ONNX Runtime: mel frames in, a speaker embedding out. Run by
scripts/setup-speech.sh; needs numpy, onnx and onnxruntime (no PyTorch: the checkpoint is read as the pickle it is).

    prepare_speaker.py --source pretrained.pt --out OUTPUT_FOLDER [--licence TEXT] [--revision N]

Writes OUTPUT_FOLDER/{model.onnx, model.json} all at once (model_folder.py: an interrupted run leaves nothing
half-written), and only after the graph, run by ONNX Runtime on random frames, has given what an independent NumPy
implementation of PyTorch's LSTM gives on the same weights (largest difference below 1e-4).

The checkpoint: PyTorch's legacy (pre-1.6, not zip) serialization, which this reader takes as well as the zip one:
pickles of a magic number, the protocol version and the writer's type sizes, then {"step", "model_state",
"optimizer_state"} with each tensor's storage as a persistent id, then the storages' keys, then each storage's
element count (int64) and raw little-endian values. Only plain containers, tensors and storages are unpickled (any
other global is refused). model_state holds lstm.{weight_ih,weight_hh,bias_ih,bias_hh}_l{0,1,2} (all views of one
flat cuDNN weight buffer), linear.{weight,bias} and GE2E's similarity_weight/similarity_bias (training only: unused).

The graph, as resemblyzer's VoiceEncoder.forward computes it:
- input `mels` float (batch, frames, 40): mel POWER spectrogram frames (not log), as resemblyzer's
  audio.wav_to_mel_spectrogram gives them: librosa.feature.melspectrogram at 16 kHz, n_fft 400 (25 ms), hop 160
  (10 ms), 40 Slaney mel bands with Slaney area normalization, periodic Hann window, centred frames; resemblyzer
  feeds partials of 160 frames, batch and frames are dynamic here;
- a 3-layer LSTM, hidden 256, zero initial state (one ONNX LSTM per layer; PyTorch's gate order i, f, g, o becomes
  ONNX's i, o, f, c; B is [b_ih, b_hh]; batch-first by Transposes around the layers);
- the last layer's final hidden state -> Linear(256, 256) -> ReLU -> divided by its L2 norm: output `embedding`
  float (batch, 256). (All-zero after the ReLU would divide by zero, as in PyTorch; it does not happen in practice.)

An utterance's embedding (resemblyzer's embed_utterance, which Chorus does around the graph) is the L2-normalized mean
of its partials' embeddings: partials of 160 frames every 77 frames (rate 1.3 per second: round(16000 / 1.3 / 160)),
the last kept if at least 75 % of it is audio (or if it is the only one), the audio padded with zeros up to the end of
the last partial BEFORE the mel frames are computed. model.json records those numbers.
"""
import argparse
import collections
import hashlib
import io
import os
import pickle
import struct
import sys
import zipfile

import numpy as np

from model_folder import PreparationError, check_onnx, read_bytes, write_folder, write_json

# Bumped when the output changes; model.json and the model's metadata carry it, and Chorus refuses other revisions.
REVISION = 1
OPSET = 17
SAMPLE_RATE = 16000
MEL_BANDS = 40
FFT_SIZE = 400          # 25 ms (hparams.mel_window_length)
HOP = 160               # 10 ms (hparams.mel_window_step)
HIDDEN = 256            # hparams.model_hidden_size
EMBEDDING = 256         # hparams.model_embedding_size
LAYERS = 3              # hparams.model_num_layers
PARTIAL_FRAMES = 160    # hparams.partials_n_frames (1.6 s)
PARTIAL_RATE = 1.3      # embed_utterance's default rate (partials per second)
MIN_COVERAGE = 0.75     # embed_utterance's default min_coverage
# voice_encoder.compute_partial_slices: frame_step = int(np.round((sampling_rate / rate) / samples_per_frame)).
PARTIAL_STEP = int(np.round((SAMPLE_RATE / PARTIAL_RATE) / HOP))
LICENCE = "Resemblyzer (Apache-2.0), GE2E weights"
LEGACY_MAGIC = 0x1950a86a20f9469cfc6c   # torch.serialization.MAGIC_NUMBER

# torch's storage classes -> the numpy type of their elements (little-endian).
STORAGES = {
    "FloatStorage": "<f4", "DoubleStorage": "<f8", "HalfStorage": "<f2", "LongStorage": "<i8", "IntStorage": "<i4",
    "ShortStorage": "<i2", "CharStorage": "i1", "ByteStorage": "u1", "BoolStorage": "?",
}


class _StorageType:
    def __init__(self, name):
        self.name, self.dtype = name, np.dtype(STORAGES[name])


class _Storage:
    """A storage the pickle refers to; its values are read after (legacy) or beside (zip) the pickle."""

    def __init__(self, key, dtype, numel):
        self.key, self.dtype, self.numel, self.values = key, dtype, numel, None


class _Tensor:
    """A tensor as torch._utils._rebuild_tensor_v2 would make it, made a numpy array once its storage is read."""

    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, int(offset), tuple(size), tuple(stride)

    def array(self, path):
        values = self.storage.values
        if values is None:
            raise PreparationError(f"{path}: storage {self.storage.key} is referred to but not stored")
        extent = 1 + sum((n - 1) * s for n, s in zip(self.size, self.stride)) if all(self.size) else 0
        if self.offset < 0 or any(s < 0 for s in self.stride) or self.offset + extent > values.size:
            raise PreparationError(f"{path}: a tensor {self.size} at {self.offset} lies outside its storage "
                                   f"{self.storage.key} ({values.size} values)")
        view = np.lib.stride_tricks.as_strided(values[self.offset:], self.size,
                                               [s * values.itemsize for s in self.stride], writeable=False)
        return np.array(view)   # a copy, in C order


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    return _Tensor(storage, offset, size, stride)


def _rebuild_tensor(storage, offset, size, stride):
    return _Tensor(storage, offset, size, stride)


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None):
    return data


class _Unpickler(pickle.Unpickler):
    """Unpickles a PyTorch checkpoint's containers and tensors, and nothing else (no arbitrary globals)."""
    ALLOWED = {
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    }

    def __init__(self, handle, path, storages, legacy):
        super().__init__(handle)
        self.path, self.storages, self.legacy = path, storages, legacy

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED:
            return self.ALLOWED[(module, name)]
        if module == "torch" and name in STORAGES:
            return _StorageType(name)
        raise PreparationError(f"{self.path}: the checkpoint refers to {module}.{name}, which this reader does not "
                               "unpickle (only containers, tensors and storages)")

    def persistent_load(self, saved_id):
        if not isinstance(saved_id, tuple) or not saved_id or saved_id[0] != "storage":
            raise PreparationError(f"{self.path}: unexpected persistent id {saved_id!r:.80}")
        if self.legacy:   # ("storage", type, key, location, numel, view_metadata)
            _, kind, key, _location, numel, view = saved_id
        else:             # ("storage", type, key, location, numel)
            _, kind, key, _location, numel = saved_id[:5]
            view = None
        if not isinstance(kind, _StorageType):
            raise PreparationError(f"{self.path}: storage {key} has no storage type")
        storage = self.storages.setdefault(key, _Storage(key, kind.dtype, numel))
        if view is not None:   # a view into another storage: (view key, offset, size)
            view_key, offset, size = view
            return _ViewStorage(storage, view_key, offset, size)
        return storage


class _ViewStorage:
    """A legacy storage view (view_metadata): `size` values from `offset` of another storage."""

    def __init__(self, base, key, offset, size):
        self.base, self.key, self.offset, self.size = base, key, offset, size

    @property
    def values(self):
        return None if self.base.values is None else self.base.values[self.offset:self.offset + self.size]


def _materialize(value, path):
    if isinstance(value, _Tensor):
        return value.array(path)
    if isinstance(value, dict):
        return type(value)((key, _materialize(item, path)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_materialize(item, path) for item in value)
    return value


def read_checkpoint(path):
    """The object a PyTorch checkpoint holds (torch.save's zip format or its legacy one), tensors as numpy arrays."""
    raw = read_bytes(path)
    storages = {}
    try:
        if zipfile.is_zipfile(io.BytesIO(raw)):
            with zipfile.ZipFile(io.BytesIO(raw)) as archive:
                names = archive.namelist()
                pickles = [name for name in names if name.endswith("/data.pkl") or name == "data.pkl"]
                if len(pickles) != 1:
                    raise PreparationError(f"{path}: a zip file, but not one PyTorch checkpoint ({len(pickles)} data.pkl)")
                prefix = pickles[0][:-len("data.pkl")]
                if prefix + "byteorder" in names and archive.read(prefix + "byteorder").strip() != b"little":
                    raise PreparationError(f"{path}: a big-endian checkpoint, which this reader does not take")
                value = _Unpickler(io.BytesIO(archive.read(pickles[0])), path, storages, legacy=False).load()
                for key, storage in storages.items():
                    data = archive.read(f"{prefix}data/{key}")
                    storage.values = np.frombuffer(data, dtype=storage.dtype, count=storage.numel)
        else:
            handle = io.BytesIO(raw)
            if pickle.load(handle) != LEGACY_MAGIC:
                raise PreparationError(f"{path}: not a PyTorch checkpoint (neither a zip nor the legacy format's magic number)")
            if pickle.load(handle) != 1001:
                raise PreparationError(f"{path}: a legacy PyTorch checkpoint of a protocol other than 1001")
            info = pickle.load(handle)
            if not isinstance(info, dict) or not info.get("little_endian", False):
                raise PreparationError(f"{path}: a big-endian (or unlabelled) legacy checkpoint, which this reader does not take")
            value = _Unpickler(handle, path, storages, legacy=True).load()
            keys = pickle.load(handle)
            for key in keys:
                if key not in storages:
                    raise PreparationError(f"{path}: storage {key} is stored but not referred to")
                storage = storages[key]
                (numel,) = struct.unpack("<q", handle.read(8))
                if numel != storage.numel:
                    raise PreparationError(f"{path}: storage {key} holds {numel} values, the pickle says {storage.numel}")
                size = numel * storage.dtype.itemsize
                data = handle.read(size)
                if len(data) != size:
                    raise PreparationError(f"{path}: ends early (in storage {key})")
                storage.values = np.frombuffer(data, dtype=storage.dtype)
            if handle.read(1):
                raise PreparationError(f"{path}: has bytes after its last storage")
    except PreparationError:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, struct.error, zipfile.BadZipFile) as error:
        raise PreparationError(f"{path}: not a readable PyTorch checkpoint ({type(error).__name__}: {error})")
    return _materialize(value, path), hashlib.sha256(raw).hexdigest()


def encoder_weights(path):
    """The encoder's weights (float32, by their PyTorch names) and the checkpoint's SHA-256; the shapes checked."""
    checkpoint, sha256 = read_checkpoint(path)
    state = checkpoint.get("model_state") if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict):
        raise PreparationError(f"{path}: no model_state (not a Resemblyzer checkpoint)")
    expected = {"linear.weight": (EMBEDDING, HIDDEN), "linear.bias": (EMBEDDING,)}
    for layer in range(LAYERS):
        expected[f"lstm.weight_ih_l{layer}"] = (4 * HIDDEN, MEL_BANDS if layer == 0 else HIDDEN)
        expected[f"lstm.weight_hh_l{layer}"] = (4 * HIDDEN, HIDDEN)
        expected[f"lstm.bias_ih_l{layer}"] = (4 * HIDDEN,)
        expected[f"lstm.bias_hh_l{layer}"] = (4 * HIDDEN,)
    weights = {}
    for name, shape in expected.items():
        value = state.get(name)
        if not isinstance(value, np.ndarray):
            raise PreparationError(f"{path}: model_state has no tensor {name}")
        if value.shape != shape:
            raise PreparationError(f"{path}: {name} is {list(value.shape)}, not {list(shape)}")
        if not np.all(np.isfinite(value)):
            raise PreparationError(f"{path}: {name} holds values that are not finite")
        weights[name] = value.astype(np.float32)
    if f"lstm.weight_ih_l{LAYERS}" in state:
        raise PreparationError(f"{path}: the LSTM has more than {LAYERS} layers")
    return weights, sha256


def reference_embeddings(weights, mels):
    """The embeddings of mels (batch, frames, 40) in float64, written from torch.nn.LSTM's documented equations in
    PyTorch's gate order (i, f, g, o), independently of the ONNX graph:
        i = σ(W_ii x + b_ii + W_hi h + b_hi)   f = σ(W_if x + b_if + W_hf h + b_hf)
        g = tanh(W_ig x + b_ig + W_hg h + b_hg)   o = σ(W_io x + b_io + W_ho h + b_ho)
        c' = f ⊙ c + i ⊙ g   h' = o ⊙ tanh(c')
    then ReLU(Linear(h of the last layer at the last frame)) / its L2 norm (VoiceEncoder.forward)."""
    def sigmoid(value):
        with np.errstate(over="ignore"):
            return 1.0 / (1.0 + np.exp(-value))

    x = np.asarray(mels, dtype=np.float64)
    batch, frames = x.shape[:2]
    for layer in range(LAYERS):
        W_ii, W_if, W_ig, W_io = np.split(weights[f"lstm.weight_ih_l{layer}"].astype(np.float64), 4)
        W_hi, W_hf, W_hg, W_ho = np.split(weights[f"lstm.weight_hh_l{layer}"].astype(np.float64), 4)
        b_ii, b_if, b_ig, b_io = np.split(weights[f"lstm.bias_ih_l{layer}"].astype(np.float64), 4)
        b_hi, b_hf, b_hg, b_ho = np.split(weights[f"lstm.bias_hh_l{layer}"].astype(np.float64), 4)
        h = np.zeros((batch, HIDDEN))
        c = np.zeros((batch, HIDDEN))
        outputs = np.empty((batch, frames, HIDDEN))
        for t in range(frames):
            xt = x[:, t]
            i = sigmoid(xt @ W_ii.T + b_ii + h @ W_hi.T + b_hi)
            f = sigmoid(xt @ W_if.T + b_if + h @ W_hf.T + b_hf)
            g = np.tanh(xt @ W_ig.T + b_ig + h @ W_hg.T + b_hg)
            o = sigmoid(xt @ W_io.T + b_io + h @ W_ho.T + b_ho)
            c = f * c + i * g
            h = o * np.tanh(c)
            outputs[:, t] = h
        x = outputs
    raw = np.maximum(h @ weights["linear.weight"].astype(np.float64).T + weights["linear.bias"].astype(np.float64), 0.0)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def onnx_gates(matrix):
    """PyTorch's gate blocks (i, f, g, o along the first axis) in ONNX's order (i, o, f, c)."""
    i, f, g, o = np.split(matrix, 4)
    return np.concatenate([i, o, f, g])


def encoder_model(weights, revision):
    """The ONNX model (see the module's note)."""
    from onnx import TensorProto, helper, numpy_helper

    initializers = []

    def constant(name, value, dtype=np.float32):
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype=dtype), name))
        return name

    nodes = [helper.make_node("Transpose", ["mels"], ["lstm_in_0"], perm=[1, 0, 2], name="time_major")]
    axis_one, axis_zero = constant("axis_1", [1], np.int64), constant("axis_0", [0], np.int64)
    for layer in range(LAYERS):
        W = constant(f"lstm.W_l{layer}", onnx_gates(weights[f"lstm.weight_ih_l{layer}"])[None])
        R = constant(f"lstm.R_l{layer}", onnx_gates(weights[f"lstm.weight_hh_l{layer}"])[None])
        B = constant(f"lstm.B_l{layer}", np.concatenate([onnx_gates(weights[f"lstm.bias_ih_l{layer}"]),
                                                         onnx_gates(weights[f"lstm.bias_hh_l{layer}"])])[None])
        last = layer == LAYERS - 1
        # Y: (frames, 1, batch, 256), the next layer's input; the last layer gives only Y_h: (1, batch, 256).
        outputs = ["", "final_h"] if last else [f"lstm_y_{layer}"]
        nodes.append(helper.make_node("LSTM", [f"lstm_in_{layer}", W, R, B], outputs, hidden_size=HIDDEN,
                                      direction="forward", name=f"lstm_l{layer}"))
        if not last:
            nodes.append(helper.make_node("Squeeze", [f"lstm_y_{layer}", axis_one], [f"lstm_in_{layer + 1}"],
                                          name=f"lstm_squeeze_{layer}"))
    nodes += [
        helper.make_node("Squeeze", ["final_h", axis_zero], ["hidden"], name="hidden_squeeze"),
        helper.make_node("Gemm", ["hidden", constant("linear.weight", weights["linear.weight"]),
                                  constant("linear.bias", weights["linear.bias"])], ["linear"], transB=1, name="linear"),
        helper.make_node("Relu", ["linear"], ["relu"], name="relu"),
        helper.make_node("ReduceL2", ["relu"], ["norm"], axes=[1], keepdims=1, name="norm"),
        helper.make_node("Div", ["relu", "norm"], ["embedding"], name="normalize"),
    ]
    graph = helper.make_graph(
        nodes, "resemblyzer-ge2e",
        [helper.make_tensor_value_info("mels", TensorProto.FLOAT, ["batch", "frames", MEL_BANDS])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", EMBEDDING])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="chorus prepare_speaker")
    model.ir_version = 8
    for key, value in {"chorus_speaker": "1", "chorus_revision": str(revision), "sample_rate": str(SAMPLE_RATE),
                       "mel_bands": str(MEL_BANDS)}.items():
        model.metadata_props.add(key=key, value=value)
    return model


def verify(model, weights, path):
    """Runs the graph on ONNX Runtime on random mel-like frames (several batch sizes and lengths) and compares it with
    reference_embeddings; raises unless the largest difference is below 1e-4. Returns that difference."""
    import onnxruntime
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    generator = np.random.default_rng(20240607)
    worst = 0.0
    for batch, frames in ((3, PARTIAL_FRAMES), (1, 37), (2, 1)):
        # Power spectra span many decades: values from 1e-8 to about 20, log-uniform.
        mels = np.exp(generator.uniform(np.log(1e-8), np.log(20.0), size=(batch, frames, MEL_BANDS))).astype(np.float32)
        (graph,) = session.run(["embedding"], {"mels": mels})
        reference = reference_embeddings(weights, mels)
        if graph.shape != (batch, EMBEDDING) or not np.all(np.isfinite(graph)):
            raise PreparationError(f"{path}: the graph gave {graph.shape} embeddings (or values not finite) for "
                                   f"{batch} × {frames} frames")
        worst = max(worst, float(np.max(np.abs(graph - reference))))
    if not worst < 1e-4:
        raise PreparationError(f"{path}: the ONNX graph differs from the NumPy LSTM by {worst:.3g} (more than 1e-4); "
                               "not written")
    return worst


def prepare(source, output, licence=None, revision=REVISION):
    weights, sha256 = encoder_weights(source)
    model = encoder_model(weights, revision)
    check_onnx(model, source)
    difference = verify(model, weights, source)
    description = {
        "name": "speaker-ge2e",
        "source": os.path.basename(source),
        "source_sha256": sha256,
        "licence": licence or LICENCE,
        "sample_rate": SAMPLE_RATE,
        "mel_bands": MEL_BANDS,
        "fft_size": FFT_SIZE,
        "hop": HOP,
        "partial_frames": PARTIAL_FRAMES,
        "partial_step": PARTIAL_STEP,
        "min_coverage": MIN_COVERAGE,
        "embedding_size": EMBEDDING,
        "chorus_revision": revision,
    }

    def write(staging):
        with open(os.path.join(staging, "model.onnx"), "wb") as handle:
            handle.write(model.SerializeToString())
        write_json(os.path.join(staging, "model.json"), description)

    write_folder(output, ".speaker-", write)
    return description, difference


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", required=True, help="Resemblyzer's pretrained.pt")
    parser.add_argument("--out", required=True, help="folder to write model.onnx and model.json")
    parser.add_argument("--licence")
    parser.add_argument("--revision", type=int, default=REVISION)
    arguments = parser.parse_args()
    try:
        description, difference = prepare(arguments.source, arguments.out, arguments.licence, arguments.revision)
    except PreparationError as error:
        sys.exit(f"prepare_speaker: {error}")
    print(f"prepare_speaker: {description['source']} -> {arguments.out} (ONNX Runtime within {difference:.2g} of the "
          "NumPy LSTM)", file=sys.stderr)


if __name__ == "__main__":
    main()

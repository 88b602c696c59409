#!/usr/bin/env python3
"""Prepares a Kokoro-82M model (kokoro-onnx's kokoro-v1.0 ONNX export: int8, fp16 or fp32) for Chorus, which runs it in
process on ONNX Runtime. Run by scripts/setup-speech.sh; needs the onnx package only.

    prepare_kokoro.py MODEL.onnx OUTPUT_FOLDER --vocabulary VOCAB.json [--licence TEXT] [--revision N]

Writes OUTPUT_FOLDER/{model.onnx, vocab.json, model.json} all at once (model_folder.py: an interrupted run leaves
nothing half-written); the folder's voices/ is kept as it was.

What Chorus needs that the export lacks:
- the time of every phoneme: a second output, `durations`, the frames the decoder makes for each token it was given
  (the graph's own rounded and clipped durations, divided by the speed), so Chorus times each word exactly
  (samples = frames × 600 at 24 kHz; the audio's length is their sum times 600);
- model.json: what Chorus lists and checks (sample rate, the frame's samples, the source's SHA-256, the revision).
The graph draws no random numbers: the same tokens, style and speed give the same audio.
"""
import argparse
import hashlib
import os
import sys

from onnx import TensorProto, helper

from model_folder import PreparationError, check_onnx, read_json, read_onnx, write_folder, write_json

# Bumped when the output changes; model.json carries it, and Chorus refuses other revisions.
REVISION = 1
SAMPLE_RATE = 24000
FRAME_SAMPLES = 600


def with_durations(graph, model_path):
    """Adds the tokens' durations as the graph's second output, `durations` (see the module's note)."""
    rounded = {node.output[0] for node in graph.node if node.op_type == "Round"}
    clips = [node for node in graph.node if node.op_type == "Clip" and node.input and node.input[0] in rounded]
    if len(clips) != 1:
        raise PreparationError(f"{model_path}: cannot tell which node gives the tokens' durations "
                               f"({len(clips)} rounded and clipped values; a Kokoro export has one)")
    durations = clips[0].output[0]
    flat = helper.make_tensor("/chorus_durations/flat_value", TensorProto.INT64, [1], [-1])
    graph.node.extend([
        helper.make_node("Constant", [], ["/chorus_durations/flat"], value=flat, name="/chorus_durations/flat_node"),
        helper.make_node("Reshape", [durations, "/chorus_durations/flat"], ["/chorus_durations/flat_durations"],
                         name="/chorus_durations/Reshape"),
        helper.make_node("Cast", ["/chorus_durations/flat_durations"], ["durations"], to=TensorProto.FLOAT,
                         name="/chorus_durations/Cast"),
    ])
    graph.output.append(helper.make_tensor_value_info("durations", TensorProto.FLOAT, ["tokens"]))


def load_vocabulary(path):
    table = read_json(path)
    if isinstance(table, dict) and isinstance(table.get("vocab"), dict):
        table = table["vocab"]
    if not isinstance(table, dict) or not table or not all(
            isinstance(key, str) and len(key) == 1 and isinstance(value, int) and 0 < value < 512
            for key, value in table.items()):
        raise PreparationError(f"{path}: not a Kokoro vocabulary (one symbol → an id from 1 to 511, each)")
    return table


def prepare(model_path, output, vocabulary_path, licence=None, revision=REVISION):
    vocabulary = load_vocabulary(vocabulary_path)
    raw, model = read_onnx(model_path)
    graph = model.graph
    inputs = sorted(i.name for i in graph.input)
    outputs = [o.name for o in graph.output]
    if inputs != ["speed", "style", "tokens"] or outputs != ["audio"]:
        raise PreparationError(f"{model_path}: not a Kokoro model (inputs {inputs}, outputs {outputs}; "
                               "expected tokens, style and speed in, audio out)")
    if any(node.op_type.startswith("Random") or node.op_type in ("Multinomial", "Bernoulli") for node in graph.node):
        raise PreparationError(f"{model_path}: the graph draws random numbers (the same text would not give the same audio)")
    with_durations(graph, model_path)
    for key, value in {"chorus_kokoro": "1", "chorus_revision": str(revision), "sample_rate": str(SAMPLE_RATE)}.items():
        model.metadata_props.add(key=key, value=value)
    check_onnx(model, model_path)

    description = {
        "name": "kokoro",
        "source": os.path.basename(model_path),
        "source_sha256": hashlib.sha256(raw).hexdigest(),
        "sample_rate": SAMPLE_RATE,
        "frame_samples": FRAME_SAMPLES,
        "style_rows": 510,
        "style_width": 256,
        "licence": licence or "Kokoro-82M weights: Apache-2.0 (hexgrad/Kokoro-82M)",
        "chorus_revision": revision,
    }

    def write(staging):
        with open(os.path.join(staging, "model.onnx"), "wb") as handle:
            handle.write(model.SerializeToString())
        write_json(os.path.join(staging, "vocab.json"), dict(sorted(vocabulary.items(), key=lambda item: item[1])), indent=0)
        write_json(os.path.join(staging, "model.json"), description)

    write_folder(output, ".kokoro-", write, keep=["voices"])
    return description


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("output")
    parser.add_argument("--vocabulary", required=True)
    parser.add_argument("--licence")
    parser.add_argument("--revision", type=int, default=REVISION)
    arguments = parser.parse_args()
    try:
        description = prepare(arguments.model, arguments.output, arguments.vocabulary, arguments.licence, arguments.revision)
    except PreparationError as error:
        sys.exit(f"prepare_kokoro: {error}")
    print(f"prepare_kokoro: {description['source']} -> {arguments.output}", file=sys.stderr)


if __name__ == "__main__":
    main()

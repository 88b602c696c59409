#!/usr/bin/env python3
"""Prepares a Piper voice (MODEL.onnx and its MODEL.onnx.json, as Piper's voice downloads come) for Chorus, which
runs it in process on ONNX Runtime. Run by scripts/setup-speech.sh; needs the onnx package only.

    prepare_piper.py MODEL.onnx OUTPUT_FOLDER [--config MODEL.onnx.json] [--licence TEXT] [--model-card FILE]
                     [--revision N]

Writes OUTPUT_FOLDER/{model.onnx, tokens.txt, voice.json[, MODEL_CARD]} all at once (model_folder.py: an interrupted
run leaves nothing half-written).

What Chorus needs that a Piper export lacks:
- the same audio for the same text: a Piper graph draws its noise (RandomNormalLike: the phoneme durations' and the
  spectrum's) anew on every call, so two renders of one message differ in length and sound, and neither a cache nor
  a byte-identical re-render could hold. Each RandomNormalLike node is replaced by standard normal values computed
  from each element's position (a sine hash through Box-Muller): noise of the same distribution, the same on every
  call. noise_scale and noise_w (the `scales` input) still scale it.
- the time of every phoneme: a second output, `durations`, the frames the decoder makes for each phoneme id it was
  given (the graph's own `Ceil` of the predicted durations), so Chorus times each word exactly (samples = frames ×
  the decoder's hop).
- tokens.txt, one `<symbol> <id>` line per entry of the config's phoneme_id_map (the space symbol's line starts
  with the space), and metadata Chorus checks (chorus_piper, chorus_revision, sample_rate, n_speakers);
- voice.json: what Chorus lists and checks (name, sample rate, language, espeak voice, speakers, defaults, licence).
"""
import argparse
import hashlib
import os
import shutil
import sys

from onnx import TensorProto, helper

from model_folder import PreparationError, check_onnx, read_json, read_onnx, write_folder, write_json

# Bumped when the output changes; voice.json and the model's metadata carry it, and Chorus refuses other revisions.
REVISION = 3


def load_config(path):
    config = read_json(path)
    if not isinstance(config, dict):
        raise PreparationError(f"{path}: not a Piper voice config (a JSON object)")

    def need(value, what, kind):
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            raise PreparationError(f"{path}: {what} is missing or not a {kind.__name__}")
        return value

    rate = need(need(config.get("audio"), "audio", dict).get("sample_rate"), "audio.sample_rate", int)
    if not 8000 <= rate <= 48000:
        raise PreparationError(f"{path}: audio.sample_rate {rate} is outside 8000–48000")
    espeak_voice = need(need(config.get("espeak"), "espeak", dict).get("voice"), "espeak.voice", str)
    if not espeak_voice or not all(c.isalnum() or c in "-_+" for c in espeak_voice):
        raise PreparationError(f"{path}: espeak.voice {espeak_voice!r} is not an espeak-ng voice name")
    phoneme_type = config.get("phoneme_type", "espeak")
    if phoneme_type != "espeak":
        raise PreparationError(f"{path}: phoneme_type {phoneme_type!r} (only espeak-ng phonemes are supported)")
    speakers = config.get("num_speakers", 1)
    if not isinstance(speakers, int) or isinstance(speakers, bool) or not 1 <= speakers <= 10000:
        raise PreparationError(f"{path}: num_speakers {speakers!r} is not a count from 1 to 10000")
    id_map = need(config.get("phoneme_id_map"), "phoneme_id_map", dict)
    tokens = {}
    for symbol, ids in id_map.items():
        if len(symbol) != 1:
            raise PreparationError(f"{path}: phoneme_id_map key {symbol!r} is not one character")
        if symbol != " " and (symbol.isspace() or not symbol.isprintable()):
            raise PreparationError(f"{path}: phoneme_id_map key U+{ord(symbol):04X} cannot be written to tokens.txt")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 100000 for i in ids):
            raise PreparationError(f"{path}: phoneme_id_map[{symbol!r}] is not a list of ids")
        tokens[symbol] = ids[0]
    for symbol in ("_", "^", "$", " "):
        if symbol not in tokens:
            raise PreparationError(f"{path}: phoneme_id_map has no {symbol!r} (Piper's pad, start, end and space)")
    if len(set(tokens.values())) != len(tokens):
        raise PreparationError(f"{path}: phoneme_id_map gives one id to two symbols")
    speaker_map = config.get("speaker_id_map") or {}
    if not isinstance(speaker_map, dict) or not all(isinstance(v, int) and 0 <= v < speakers for v in speaker_map.values()):
        raise PreparationError(f"{path}: speaker_id_map does not map names to ids below num_speakers")
    inference = config.get("inference") or {}
    defaults = {}
    for key, fallback in (("noise_scale", 0.667), ("length_scale", 1.0), ("noise_w", 0.8)):
        value = inference.get(key, fallback)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value <= 10:
            raise PreparationError(f"{path}: inference.{key} {value!r} is not a number in (0, 10]")
        defaults[key] = float(value)
    language = config.get("language") or {}
    return {
        "sample_rate": rate,
        "espeak_voice": espeak_voice,
        "speakers": speakers,
        "speaker_names": {str(name): sid for name, sid in speaker_map.items()},
        "tokens": tokens,
        "defaults": defaults,
        "language": str(language.get("code") or espeak_voice),
        "language_name": str(language.get("name_english") or ""),
        "quality": str((config.get("audio") or {}).get("quality") or ""),
    }


def deterministic_normal(node, index):
    """Nodes computing what RandomNormalLike `node` would (standard normal values shaped like its input), from each
    element's position instead of a random generator."""
    prefix = f"/chorus_noise_{index}/"
    dtype = next((a.i for a in node.attribute if a.name == "dtype"), TensorProto.FLOAT)
    if dtype != TensorProto.FLOAT:
        raise PreparationError(f"{node.name}: RandomNormalLike of type {dtype} (only float is supported)")
    for attribute in node.attribute:
        if attribute.name in ("mean", "scale") and abs(attribute.f - (0.0 if attribute.name == "mean" else 1.0)) > 0:
            raise PreparationError(f"{node.name}: RandomNormalLike with {attribute.name} {attribute.f} is not supported")

    def name(part):
        return prefix + part

    def constant(part, value, shape=None):
        tensor = helper.make_tensor(name(part) + "_value", TensorProto.FLOAT if isinstance(value, float) else TensorProto.INT64,
                                    shape if shape is not None else [], [value] if shape is None else value)
        return helper.make_node("Constant", [], [name(part)], value=tensor, name=name(part) + "_node")

    source = node.input[0]
    out = node.output[0]
    nodes = [
        helper.make_node("Shape", [source], [name("shape")], name=name("Shape")),
        helper.make_node("ConstantOfShape", [name("shape")], [name("ones")], name=name("ConstantOfShape"),
                         value=helper.make_tensor(name("one"), TensorProto.FLOAT, [1], [1.0])),
        constant("flat_shape", [-1], [1]),
        helper.make_node("Reshape", [name("ones"), name("flat_shape")], [name("flat")], name=name("Reshape")),
        constant("axis", 0),
        helper.make_node("CumSum", [name("flat"), name("axis")], [name("position")], name=name("CumSum")),
    ]

    def uniform(part, multiplier, offset):
        # frac(sin(position * multiplier + offset) * 43758.5453), kept inside (0, 1).
        nodes.extend([
            constant(part + "_multiplier", multiplier),
            constant(part + "_offset", offset),
            constant(part + "_spread", 43758.5453),
            helper.make_node("Mul", [name("position"), name(part + "_multiplier")], [name(part + "_scaled")]),
            helper.make_node("Add", [name(part + "_scaled"), name(part + "_offset")], [name(part + "_shifted")]),
            helper.make_node("Sin", [name(part + "_shifted")], [name(part + "_sine")]),
            helper.make_node("Mul", [name(part + "_sine"), name(part + "_spread")], [name(part + "_wide")]),
            helper.make_node("Floor", [name(part + "_wide")], [name(part + "_floor")]),
            helper.make_node("Sub", [name(part + "_wide"), name(part + "_floor")], [name(part + "_fraction")]),
        ])
        return name(part + "_fraction")

    first = uniform("u1", 12.9898, 0.5 + index)
    second = uniform("u2", 78.233, 1.5 + index)
    nodes.extend([
        constant("tiny", 1e-7),
        constant("almost_one", 1.0 - 1e-7),
        helper.make_node("Clip", [first, name("tiny"), name("almost_one")], [name("u1_open")]),
        helper.make_node("Log", [name("u1_open")], [name("log")]),
        constant("minus_two", -2.0),
        helper.make_node("Mul", [name("log"), name("minus_two")], [name("radius_squared")]),
        helper.make_node("Sqrt", [name("radius_squared")], [name("radius")]),
        constant("two_pi", 6.283185307179586),
        helper.make_node("Mul", [second, name("two_pi")], [name("angle")]),
        helper.make_node("Cos", [name("angle")], [name("cosine")]),
        helper.make_node("Mul", [name("radius"), name("cosine")], [name("normal_flat")]),
        helper.make_node("Reshape", [name("normal_flat"), name("shape")], [out], name=name("Reshape_back")),
    ])
    return nodes


def with_durations(graph, model_path):
    """Adds the phoneme durations as the graph's second output, `durations` (see the module's note)."""
    ceilings = [node for node in graph.node if node.op_type == "Ceil" and not node.name.startswith("/dp/")]
    if len(ceilings) != 1:
        raise PreparationError(f"{model_path}: cannot tell which Ceil node gives the phoneme durations "
                               f"({len(ceilings)} candidates)")
    durations = ceilings[0].output[0]
    users = {node.op_type for node in graph.node if durations in node.input}
    if not {"ReduceSum", "CumSum"} <= users:
        raise PreparationError(f"{model_path}: node {ceilings[0].name} is not VITS's duration ceiling "
                               f"(used by {sorted(users)})")
    flat = helper.make_tensor("/chorus_durations/flat_value", TensorProto.INT64, [1], [-1])
    graph.node.extend([
        helper.make_node("Constant", [], ["/chorus_durations/flat"], value=flat, name="/chorus_durations/flat_node"),
        helper.make_node("Reshape", [durations, "/chorus_durations/flat"], ["durations"], name="/chorus_durations/Reshape"),
    ])
    graph.output.append(helper.make_tensor_value_info("durations", TensorProto.FLOAT, ["ids"]))


def prepare(model_path, output, config_path=None, licence=None, model_card=None, revision=REVISION):
    config_path = config_path or model_path + ".json"
    config = load_config(config_path)
    raw, model = read_onnx(model_path)
    graph = model.graph
    inputs = [i.name for i in graph.input]
    if inputs[:3] != ["input", "input_lengths", "scales"] or len(graph.output) != 1:
        raise PreparationError(f"{model_path}: not a Piper VITS model (inputs {inputs}, {len(graph.output)} outputs)")
    if (config["speakers"] > 1) != ("sid" in inputs):
        raise PreparationError(f"{model_path}: the config says {config['speakers']} speakers, the graph "
                               + ("takes" if "sid" in inputs else "does not take") + " a speaker id")

    replaced = 0
    nodes = []
    for node in graph.node:
        if node.op_type == "RandomNormalLike":
            nodes.extend(deterministic_normal(node, replaced))
            replaced += 1
        elif node.op_type in ("RandomNormal", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli"):
            raise PreparationError(f"{model_path}: node {node.name} ({node.op_type}) draws random numbers Chorus cannot fix")
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    with_durations(graph, model_path)

    metadata = {
        "chorus_piper": "1",
        "n_speakers": str(config["speakers"]),
        "sample_rate": str(config["sample_rate"]),
        "chorus_revision": str(revision),
        "chorus_fixed_noise": str(replaced),
    }
    # What revisions 1 and 2 wrote for sherpa-onnx goes; the rest is the voice author's.
    sherpa = {"model_type", "comment", "language", "voice", "version", "has_espeak", "has_g2pw"}
    kept = [entry for entry in model.metadata_props if entry.key not in metadata and entry.key not in sherpa]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    for key, value in metadata.items():
        model.metadata_props.add(key=key, value=value)
    check_onnx(model, model_path)

    voice = {
        "name": os.path.basename(os.path.normpath(output)),
        "sample_rate": config["sample_rate"],
        "language": config["language"],
        "language_name": config["language_name"],
        "espeak_voice": config["espeak_voice"],
        "speakers": config["speakers"],
        "speaker_names": config["speaker_names"],
        "quality": config["quality"],
        "defaults": config["defaults"],
        "licence": licence or "not stated (see the voice's model card)",
        "source_sha256": hashlib.sha256(raw).hexdigest(),
        "chorus_revision": revision,
    }

    def write(staging):
        with open(os.path.join(staging, "model.onnx"), "wb") as handle:
            handle.write(model.SerializeToString())
        with open(os.path.join(staging, "tokens.txt"), "w", encoding="utf-8", newline="\n") as handle:
            for symbol, token in sorted(config["tokens"].items(), key=lambda item: item[1]):
                handle.write(f"{symbol} {token}\n")
        write_json(os.path.join(staging, "voice.json"), voice)
        if model_card:
            shutil.copyfile(model_card, os.path.join(staging, "MODEL_CARD"))

    write_folder(output, ".piper-", write)
    return voice


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("output")
    parser.add_argument("--config")
    parser.add_argument("--licence")
    parser.add_argument("--model-card")
    parser.add_argument("--revision", type=int, default=REVISION)
    arguments = parser.parse_args()
    try:
        voice = prepare(arguments.model, arguments.output, arguments.config, arguments.licence, arguments.model_card,
                        arguments.revision)
    except PreparationError as error:
        sys.exit(f"prepare_piper: {error}")
    print(f"prepare_piper: {voice['name']}: {voice['sample_rate']} Hz, {voice['espeak_voice']}, "
          f"{voice['speakers']} speaker(s) -> {arguments.output}", file=sys.stderr)


if __name__ == "__main__":
    main()

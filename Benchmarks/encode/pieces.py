"""What aac_pieces.py and opus_pieces.py share: their arguments, the render, and where the pieces are cut."""
import argparse, json, os, subprocess, tempfile

MARGIN = 4096   # silent samples kept on both sides of a cut


def arguments(bitrate):
    parser = argparse.ArgumentParser()
    parser.add_argument("conversation")
    parser.add_argument("--chorus", default=".build/release/chorus")
    parser.add_argument("--bitrate", default=bitrate)
    parser.add_argument("--pieces", type=int, nargs="+", default=[2, 8])
    return parser.parse_args()


def render(args, name, *options):
    """Renders the conversation to WAV in a new temporary folder: (folder, WAV path, timeline segments)."""
    work = tempfile.mkdtemp(prefix=f"chorus-{name}-")
    wav = os.path.join(work, "pcm.wav")
    subprocess.run([args.chorus, "render", args.conversation, "-o", wav, *options, "--timeline", wav + ".json", "--quiet"],
                   check=True)
    return work, wav, json.load(open(wav + ".json"))["segments"]


def candidates(segments, packet):
    """Per gap, the first packet boundary MARGIN samples into it, if the gap leaves MARGIN after it."""
    points = []
    for before, after in zip(segments, segments[1:]):
        q = -(-(before["end_sample"] + MARGIN) // packet) * packet
        if q + MARGIN <= after["start_sample"]:
            points.append(q)
    return points


def cuts(points, count):
    """count − 1 of the candidate points, spread evenly."""
    step = len(points) / count
    return [points[int(step * (k + 1)) - 1] for k in range(count - 1)]

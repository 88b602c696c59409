import ChorusAudio
import ChorusConversation
import Foundation

/// The benchmark job, as the peers need it.
struct PeerJob {
    var conversation: Conversation
    var clips: [String]
    var directory: URL
    var format: OutputFileFormat
    var bitRate: Int
    var quality: Int
    /// A produced job: this jingle before and after the messages, and this bed under everything, ducked.
    var music: (jingle: String, bed: String)?

    var clipPaths: [String] { clips.map(path) }
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    var gapSeconds: Double { Double(conversation.gapMilliseconds) / 1000 }
}

/// Tools `chorus-bench --compare` measures on the same job. They are only ever run here, as peers.
enum Peer {
    case ffmpegCLI, pydub

    var name: String { self == .ffmpegCLI ? "ffmpeg CLI" : "pydub" }

    var installHint: String { self == .ffmpegCLI ? "apt-get install ffmpeg" : "pip install pydub" }

    func note(music: Bool) -> String {
        switch (self, music) {
        case (.ffmpegCLI, false):
            return "ffprobe per clip, then aresample/aformat/apad per input, concat, loudnorm I=-16 TP=-1, one encode"
        case (.ffmpegCLI, true):
            return "ffprobe per clip; jingle + clips + jingle through aresample/aformat/apad and concat; the bed looped (-stream_loop), "
                + "volume, afade in, sidechaincompress keyed by the speech; amix; loudnorm I=-16 TP=-1; one encode"
        case (.pydub, false):
            return "from_file per clip, set_frame_rate/set_channels, gain to -20 dBFS (no LUFS in pydub), += with silent(), export"
        case (.pydub, true):
            return "as above with the jingle first and last; the bed looped (*), gain, fade_in/fade_out, each clip overlaid on it "
                + "with gain_during_overlay=-12 (the ducking), export"
        }
    }

    var isAvailable: Bool {
        switch self {
        case .ffmpegCLI: return Self.which("ffmpeg") != nil && Self.which("ffprobe") != nil
        case .pydub: return Self.which("python3") != nil && ((try? Self.execute("python3", ["-c", "import pydub"])) != nil)
        }
    }

    /// Runs the job once; returns its wall time in seconds.
    func run(_ job: PeerJob) throws -> Double {
        let started = Date()
        switch self {
        case .ffmpegCLI:
            let speech = job.music.map { [job.path($0.jingle)] + job.clipPaths + [job.path($0.jingle)] } ?? job.clipPaths
            for path in speech {
                _ = try Self.execute("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
            }
            var arguments = ["-v", "error", "-y"]
            var graph = ""
            for (index, path) in speech.enumerated() {
                arguments += ["-i", path]
                let pad = index < speech.count - 1 ? ",apad=pad_dur=\(job.gapSeconds)" : ""
                graph += "[\(index):a]aresample=\(job.sampleRate),aformat=channel_layouts=mono\(pad)[a\(index)];"
            }
            graph += speech.indices.map { "[a\($0)]" }.joined()
            if let music = job.music {
                arguments += ["-stream_loop", "-1", "-i", job.path(music.bed)]
                graph += "concat=n=\(speech.count):v=0:a=1,asplit=2[voice][key];"
                graph += "[\(speech.count):a]aresample=\(job.sampleRate),aformat=channel_layouts=mono,volume=-18dB,afade=t=in:d=1.5[bed];"
                graph += "[bed][key]sidechaincompress=threshold=0.02:ratio=8:attack=50:release=800[ducked];"
                graph += "[voice][ducked]amix=inputs=2:duration=first:normalize=0,loudnorm=I=-16:TP=-1,aresample=\(job.sampleRate)[out]"
            } else {
                graph += "concat=n=\(speech.count):v=0:a=1,loudnorm=I=-16:TP=-1,aresample=\(job.sampleRate)[out]"
            }
            arguments += ["-filter_complex", graph, "-map", "[out]"] + job.ffmpegCodec
            arguments.append(job.directory.appendingPathComponent("ffmpeg.\(job.format.rawValue)").path)
            _ = try Self.execute("ffmpeg", arguments)
        case .pydub:
            _ = try Self.execute(
                "python3",
                [
                    "-c", Self.pydubScript, job.conversation.name,
                    job.directory.appendingPathComponent("pydub.\(job.format.rawValue)").path,
                    job.pydubFormat, "\(job.bitRate / 1000)k",
                ]
                    + (job.music.map { [job.path($0.jingle), job.path($0.bed)] } ?? []))
        }
        return Date().timeIntervalSince(started)
    }

    static let pydubScript = """
        import json, os, sys
        from pydub import AudioSegment
        path, out, fmt, bitrate = sys.argv[1:5]
        music = sys.argv[5:7]
        conversation = json.load(open(path))
        base = os.path.dirname(path)
        gap = AudioSegment.silent(duration=conversation.get("gap_ms", 300), frame_rate=44100)
        combined = AudioSegment.empty()
        timeline = []
        pieces = [("Jingle", music[0])] if music else []
        pieces += [(m["speaker"], os.path.join(base, m["audio"])) for m in conversation["messages"]]
        pieces += [("Jingle", music[0])] if music else []
        clips = []
        for index, (speaker, file) in enumerate(pieces):
            clip = AudioSegment.from_file(file).set_frame_rate(44100).set_channels(1)
            clip = clip.apply_gain(-20.0 - clip.dBFS)
            if index:
                combined += gap
            timeline.append({"speaker": speaker, "start": len(combined) / 1000.0})
            clips.append((len(combined), clip))
            combined += clip
            timeline[-1]["end"] = len(combined) / 1000.0
        if music:
            bed = AudioSegment.from_file(music[1]).set_frame_rate(44100).set_channels(1)
            bed = bed * (len(combined) // len(bed) + 1)
            bed = bed[:len(combined)].apply_gain(-38.0 - bed.dBFS).fade_in(1500).fade_out(3000)
            for position, clip in clips:
                bed = bed.overlay(clip, position=position, gain_during_overlay=-12)
            combined = bed
        combined.export(out, format=fmt, bitrate=bitrate)
        json.dump(timeline, open(out + ".timeline.json", "w"))
        """

    static func which(_ program: String) -> String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @discardableResult
    static func execute(_ program: String, _ arguments: [String]) throws -> Data {
        guard let path = which(program) else { throw AudioError(.invalidArgument, subject: program, reason: "not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: message, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
            throw AudioError(.encodingFailed, subject: program, reason: "exited with status \(process.terminationStatus)", underlying: text)
        }
        return data
    }
}

extension PeerJob {
    var sampleRate: Int { format.defaultSampleRate }

    var ffmpegCodec: [String] {
        switch format {
        case .mp3: return ["-c:a", "libmp3lame", "-b:a", "\(bitRate / 1000)k", "-compression_level", "\(quality)"]
        case .m4a: return ["-c:a", "aac", "-b:a", "\(bitRate / 1000)k"]
        case .ogg: return ["-c:a", "libopus", "-b:a", "\(bitRate / 1000)k"]
        case .wav, .aiff: return ["-c:a", "pcm_s16le"]
        case .flac: return ["-c:a", "flac"]
        }
    }

    var pydubFormat: String {
        switch format {
        case .m4a: return "ipod"
        case .aiff: return "aiff"
        default: return format.rawValue
        }
    }
}

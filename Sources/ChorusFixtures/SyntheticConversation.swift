public import ChorusAudio
public import Foundation

/// A generated multi-voice conversation in mixed formats, for benchmarks: the job `chorus bench`
/// times against the FFmpeg command line and pydub.
///
/// Clips are speech-like signals with edge silence, in MP3 (24 and 22.05 kHz mono), AAC/M4A
/// (44.1 kHz stereo), WAV (16 and 44.1 kHz) and more; messages reuse a pool of at most 24 clips,
/// so a 1,000-message conversation is quick to build yet renders 1,000 decodes.
///
/// ```swift
/// let bench = try SyntheticConversation.write(messages: 50, in: directory)
/// let conversation = try Conversation.load(from: bench.conversationURL)
/// ```
public struct SyntheticConversation: Sendable {
    /// One clip of the pool.
    public struct Clip: Sendable {
        public var file: String
        public var encoding: ClipEncoding
        public var format: AudioFormat
        public var bitRate: Int
    }

    /// The conversation JSON file.
    public var conversationURL: URL
    /// Clip file (relative to the conversation) for each message, in order.
    public var messageClips: [String]
    /// The distinct clips.
    public var clips: [Clip]
    /// Speakers, in order of first appearance.
    public var speakers: [String]

    static let voices: [(name: String, fundamental: Double)] = [
        ("Sarah", 210), ("Marcus", 115), ("Aisha", 185), ("Dad", 95), ("Maya", 260),
    ]

    static let formats: [(ClipEncoding, AudioFormat, Int)] = [
        (.mp3, AudioFormat(sampleRate: 24_000, channels: 1), 48_000),
        (.m4a, AudioFormat(sampleRate: 44_100, channels: 2), 96_000),
        (.wav16, AudioFormat(sampleRate: 16_000, channels: 1), 0),
        (.mp3, AudioFormat(sampleRate: 22_050, channels: 1), 64_000),
        (.m4a, AudioFormat(sampleRate: 24_000, channels: 1), 64_000),
        (.wav16, AudioFormat(sampleRate: 44_100, channels: 1), 0),
    ]

    /// Writes the clips and `conversation.json` into `directory`.
    /// - Parameters:
    ///   - messages: number of messages (≥ 1).
    ///   - poolSize: distinct clips to generate (at most `messages`).
    ///   - seed: varies the voices deterministically.
    public static func write(messages: Int, in directory: URL, poolSize: Int = 24, seed: UInt64 = 1) throws -> SyntheticConversation {
        guard messages >= 1 else {
            throw AudioError(.invalidArgument, subject: "--messages \(messages)", reason: "must be at least 1")
        }
        var random = SplitMix(seed: seed)
        var clips: [Clip] = []
        for index in 0..<min(poolSize, messages) {
            let (encoding, format, bitRate) = formats[index % formats.count]
            let voice = voices[index % voices.count]
            let seconds = 3 + 6 * random.next()
            let signal = SignalGenerator.concatenate([
                SignalGenerator.silence(seconds: 0.15 + 0.2 * random.next(), format: format),
                SignalGenerator.speechLike(fundamental: voice.fundamental, seconds: seconds, format: format,
                                           seed: seed &+ UInt64(index), amplitude: 0.1 + 0.8 * random.next()),
                SignalGenerator.silence(seconds: 0.2 + 0.3 * random.next(), format: format),
            ])
            let name = String(format: "clip%02d-%@.%@", index, voice.name.lowercased(), encoding.fileExtension)
            try encoding.write(signal, to: directory.appendingPathComponent(name), bitRate: max(bitRate, 32_000))
            clips.append(Clip(file: name, encoding: encoding, format: format, bitRate: bitRate))
        }
        var lines: [String] = []
        var messageClips: [String] = []
        for index in 0..<messages {
            let clip = clips[index % clips.count]
            let speaker = voices[(index % clips.count) % voices.count].name
            messageClips.append(clip.file)
            lines.append("    {\"speaker\": \"\(speaker)\", \"audio\": \"\(clip.file)\", \"text\": \"Message \(index + 1)\"}")
        }
        let json = "{\n  \"gap_ms\": 300,\n  \"messages\": [\n" + lines.joined(separator: ",\n") + "\n  ]\n}\n"
        let url = directory.appendingPathComponent("conversation.json")
        try Data(json.utf8).write(to: url)
        let speakers = Array(voices.prefix(min(voices.count, clips.count)).map(\.name))
        return SyntheticConversation(conversationURL: url, messageClips: messageClips, clips: clips, speakers: speakers)
    }

    /// A one-line description of the clip formats, e.g. `mp3 24 kHz mono, m4a 44.1 kHz stereo, …`.
    public var formatSummary: String {
        var seen: [String] = []
        for clip in clips {
            let rate = clip.format.sampleRate % 1000 == 0 ? "\(clip.format.sampleRate / 1000)" : String(format: "%g", Double(clip.format.sampleRate) / 1000)
            let text = "\(clip.encoding.fileExtension) \(rate) kHz \(clip.format.channels == 1 ? "mono" : "stereo")"
            if !seen.contains(text) { seen.append(text) }
        }
        return seen.joined(separator: ", ")
    }
}

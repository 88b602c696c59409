public import ChorusAudio
public import Foundation

/// A generated multi-voice conversation in mixed formats, for benchmarks: the job `chorus-bench`
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
                SignalGenerator.speechLike(
                    fundamental: voice.fundamental, seconds: seconds, format: format,
                    seed: seed &+ UInt64(index), amplitude: 0.1 + 0.8 * random.next()),
                SignalGenerator.silence(seconds: 0.2 + 0.3 * random.next(), format: format),
            ])
            let name = String(format: "clip%02d-%@.%@", index, voice.name.lowercased(), encoding.fileExtension)
            try encoding.write(signal, to: directory.appendingPathComponent(name), bitRate: max(bitRate, 32_000))
            clips.append(Clip(file: name, encoding: encoding, format: format, bitRate: bitRate))
        }
        return try writeConversation(messages: messages, clips: clips, speakers: voices.map(\.name), texts: [], in: directory)
    }

    /// The four formats of the speech corpus, taken in turn: what phones and TTS providers hand a backend.
    public static let speechFormats: [(ClipEncoding, AudioFormat, Int)] = [
        (.mp3, AudioFormat(sampleRate: 44_100, channels: 1), 96_000),
        (.mp3, AudioFormat(sampleRate: 24_000, channels: 1), 48_000),
        (.m4a, AudioFormat(sampleRate: 44_100, channels: 2), 96_000),
        (.wav16, AudioFormat(sampleRate: 16_000, channels: 1), 0),
    ]

    /// Writes a conversation of recorded speech: the pool's clips (e.g. espeak-ng voices speaking
    /// `SyntheticConversation.speechTexts`) resampled and encoded in `speechFormats` in turn, messages
    /// cycling through the pool, each message's text in the conversation.
    /// - Parameters:
    ///   - pool: one entry per distinct clip: who speaks, what, and the audio (any format).
    public static func write(
        speech pool: [(speaker: String, text: String, audio: AudioBuffer)], messages: Int,
        in directory: URL
    ) throws -> SyntheticConversation {
        guard messages >= 1, !pool.isEmpty else {
            throw AudioError(.invalidArgument, subject: "speech corpus", reason: "needs at least one message and one clip")
        }
        var clips: [Clip] = []
        for (index, entry) in pool.prefix(messages).enumerated() {
            let (encoding, format, bitRate) = speechFormats[index % speechFormats.count]
            let resampler = try Resampler(from: entry.audio.format, to: format)
            var samples: [Float] = []
            try entry.audio.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &samples) }
            try resampler.flush(into: &samples)
            let name = String(format: "speech%03d-%@.%@", index, entry.speaker.lowercased(), encoding.fileExtension)
            try encoding.write(
                AudioBuffer(format: format, samples: samples), to: directory.appendingPathComponent(name),
                bitRate: max(bitRate, 32_000))
            clips.append(Clip(file: name, encoding: encoding, format: format, bitRate: bitRate))
        }
        return try writeConversation(
            messages: messages, clips: clips, speakers: pool.map(\.speaker), texts: pool.map(\.text),
            in: directory)
    }

    /// Message `index` plays clip `index % clips.count`, spoken by `speakers[that]` (cycled), with `texts[that]`
    /// (or "Message N").
    private static func writeConversation(
        messages: Int, clips: [Clip], speakers: [String], texts: [String],
        in directory: URL
    ) throws -> SyntheticConversation {
        var entries: [[String: String]] = []
        var messageClips: [String] = []
        var order: [String] = []
        for index in 0..<messages {
            let clipIndex = index % clips.count
            let speaker = speakers[clipIndex % speakers.count]
            if !order.contains(speaker) { order.append(speaker) }
            messageClips.append(clips[clipIndex].file)
            entries.append([
                "speaker": speaker, "audio": clips[clipIndex].file,
                "text": clipIndex < texts.count ? texts[clipIndex] : "Message \(index + 1)",
            ])
        }
        let json = try JSONSerialization.data(
            withJSONObject: ["gap_ms": 300, "messages": entries] as [String: Any],
            options: [.prettyPrinted, .sortedKeys])
        let url = directory.appendingPathComponent("conversation.json")
        try json.write(to: url)
        return SyntheticConversation(conversationURL: url, messageClips: messageClips, clips: clips, speakers: order)
    }

    /// Sentences for the speech corpus: family-chat messages of different lengths.
    public static let speechTexts: [String] = [
        "Practice moved to half past four, so I can pick the kids up on the way.",
        "Did anyone see my blue umbrella? I think I left it in the car.",
        "Dinner is at seven tonight. Grandma is bringing her apple pie!",
        "Running late, the train is stuck outside the station again.",
        "Okay.",
        "Can someone feed the cat before school? She has been yelling at me since six.",
        "The plumber says he can come on Thursday morning between nine and eleven, if that works for everyone.",
        "Happy birthday, Maya! We love you so much.",
        "Who finished the milk and put the empty carton back in the fridge?",
        "I booked the cabin for the second weekend of August. It sleeps eight, has a lake, and no wifi.",
        "Sounds good to me.",
        "Reminder: the car needs its inspection before the end of the month.",
        "Aisha scored two goals today, and the coach wants her in the spring tournament.",
        "Please send me the photos from the wedding when you get a chance.",
        "Tomorrow's forecast says heavy rain all day, so bring your boots.",
        "I'm at the pharmacy. Does anyone need anything else while I'm here?",
        "The wifi password changed. It is on the fridge, next to the calendar.",
        "Marcus, your library books are three weeks overdue. Three!",
        "We should plan something for Dad's retirement. Ideas?",
        "Thank you for the flowers, they are beautiful.",
        "Landed safely. Waiting for my bag now, see you in an hour.",
        "Can we move the call to Sunday afternoon? Saturday is packed.",
        "The school play starts at six thirty. Save me a seat near the front, please.",
        "Yes!",
    ]
    /// A one-line description of the clip formats, e.g. `mp3 24 kHz mono, m4a 44.1 kHz stereo, …`.
    public var formatSummary: String {
        var seen: [String] = []
        for clip in clips {
            let rate =
                clip.format.sampleRate % 1000 == 0 ? "\(clip.format.sampleRate / 1000)" : String(format: "%g", Double(clip.format.sampleRate) / 1000)
            let text = "\(clip.encoding.fileExtension) \(rate) kHz \(clip.format.channels == 1 ? "mono" : "stereo")"
            if !seen.contains(text) { seen.append(text) }
        }
        return seen.joined(separator: ", ")
    }
}

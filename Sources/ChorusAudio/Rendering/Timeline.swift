public import Foundation

/// Who speaks when in a rendered file. Positions are exact sample offsets in the output;
/// seconds are derived from them, and `duration` is what a decoder yields from the file.
///
/// ```json
/// {"duration": 4.9, "samples": 216090, "sample_rate": 44100, "channels": 1, "gap_ms": 300,
///  "segments": [{"index": 0, "speaker": "Sarah", "start": 0, "end": 2.3, "start_sample": 0,
///                "end_sample": 101430, "text": "…", "source": "clips/sarah-1.mp3", "gain_db": 3.1}],
///  "speakers": [{"name": "Sarah", "seconds": 2.3, "segments": [0]}]}
/// ```
public struct Timeline: Codable, Sendable, Equatable {
    /// One word inside a segment, in seconds of the output.
    public typealias Word = WordTiming

    /// One message placed in the output.
    public struct Segment: Codable, Sendable, Equatable {
        /// Position of the message in the conversation.
        public var index: Int
        public var speaker: String
        /// Seconds, `startSample / sampleRate`.
        public var start: Double
        /// Seconds, `endSample / sampleRate` (exclusive).
        public var end: Double
        public var startSample: Int
        /// Exclusive.
        public var endSample: Int
        public var text: String?
        /// The clip as named in the conversation, or the voice it was synthesized with.
        public var source: String
        /// Loudness gain applied to the message, in dB.
        public var gainDB: Double
        /// Voice id used to synthesize the message, when it was synthesized.
        public var voice: String?
        /// True when the message was rendered with the fallback voice.
        public var fallback: Bool?
        /// Word timings, when the voice provides them.
        public var words: [Word]?

        enum CodingKeys: String, CodingKey {
            case index, speaker, start, end
            case startSample = "start_sample"
            case endSample = "end_sample"
            case text, source
            case gainDB = "gain_db"
            case voice, fallback, words
        }
    }

    /// Talk time per speaker, in order of first appearance.
    public struct Speaker: Codable, Sendable, Equatable {
        public var name: String
        /// Seconds of that speaker's segments.
        public var seconds: Double
        /// Indexes of that speaker's segments.
        public var segments: [Int]
    }

    public var duration: Double
    public var samples: Int
    public var sampleRate: Int
    public var channels: Int
    public var gapMs: Int
    public var segments: [Segment]
    public var speakers: [Speaker]

    enum CodingKeys: String, CodingKey {
        case duration, samples
        case sampleRate = "sample_rate"
        case channels
        case gapMs = "gap_ms"
        case segments, speakers
    }

    /// Builds the timeline of `segments` placed in `samples` frames of output.
    init(format: AudioFormat, samples: Int, gapMs: Int, segments: [Segment]) {
        self.duration = format.roundedSeconds(frames: samples)
        self.samples = samples
        self.sampleRate = format.sampleRate
        self.channels = format.channels
        self.gapMs = gapMs
        self.segments = segments
        var speakers: [Speaker] = []
        var positions: [String: Int] = [:]
        for segment in segments {
            let position = positions[segment.speaker] ?? {
                speakers.append(Speaker(name: segment.speaker, seconds: 0, segments: []))
                positions[segment.speaker] = speakers.count - 1
                return speakers.count - 1
            }()
            speakers[position].segments.append(segment.index)
            speakers[position].seconds += Double(segment.endSample - segment.startSample)
        }
        for index in speakers.indices {
            speakers[index].seconds = format.roundedSeconds(frames: Int(speakers[index].seconds))
        }
        self.speakers = speakers
    }

    /// Pretty-printed JSON, members in the documented order; optional fields are omitted when absent.
    public func jsonData() -> Data {
        let segmentNodes: [OrderedJSON] = segments.map { segment in
            var members: [(String, OrderedJSON)] = [
                ("index", .integer(segment.index)), ("speaker", .string(segment.speaker)),
                ("start", .number(segment.start)), ("end", .number(segment.end)),
                ("start_sample", .integer(segment.startSample)), ("end_sample", .integer(segment.endSample)),
            ]
            if let text = segment.text { members.append(("text", .string(text))) }
            members.append(("source", .string(segment.source)))
            members.append(("gain_db", .number(segment.gainDB)))
            if let voice = segment.voice { members.append(("voice", .string(voice))) }
            if let fallback = segment.fallback { members.append(("fallback", .bool(fallback))) }
            if let words = segment.words {
                members.append(("words", .array(words.map {
                    .object([("word", .string($0.word)), ("start", .number($0.start)), ("end", .number($0.end))])
                })))
            }
            return .object(members)
        }
        return OrderedJSON.object([
            ("duration", .number(duration)), ("samples", .integer(samples)), ("sample_rate", .integer(sampleRate)),
            ("channels", .integer(channels)), ("gap_ms", .integer(gapMs)), ("segments", .array(segmentNodes)),
            ("speakers", .array(speakers.map {
                .object([("name", .string($0.name)), ("seconds", .number($0.seconds)),
                         ("segments", .array($0.segments.map { .integer($0) }))])
            })),
        ]).data()
    }
}

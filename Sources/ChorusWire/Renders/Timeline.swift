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
        /// Word timings: from the voice that spoke the message, or for a recorded message from the speech recognizer
        /// (its own words, or the message's text aligned to the recording).
        public var words: [Word]?
        /// True when `text` is what the speech recognizer heard in a recorded message that came without text.
        public var transcribed: Bool?

        public init(
            index: Int, speaker: String, start: Double, end: Double, startSample: Int, endSample: Int, text: String?,
            source: String, gainDB: Double, voice: String?, fallback: Bool?, words: [Word]?, transcribed: Bool? = nil
        ) {
            self.index = index
            self.speaker = speaker
            self.start = start
            self.end = end
            self.startSample = startSample
            self.endSample = endSample
            self.text = text
            self.source = source
            self.gainDB = gainDB
            self.voice = voice
            self.fallback = fallback
            self.words = words
            self.transcribed = transcribed
        }

        enum CodingKeys: String, CodingKey {
            case index, speaker, start, end
            case startSample = "start_sample"
            case endSample = "end_sample"
            case text, source
            case gainDB = "gain_db"
            case voice, fallback, words, transcribed
        }
    }

    /// Talk time per speaker, in order of first appearance.
    public struct Speaker: Codable, Sendable, Equatable {
        public var name: String
        /// Seconds of that speaker's segments.
        public var seconds: Double
        /// Indexes of that speaker's segments.
        public var segments: [Int]

        public init(name: String, seconds: Double, segments: [Int]) {
            self.name = name
            self.seconds = seconds
            self.segments = segments
        }
    }

    public var duration: Double
    public var samples: Int
    public var sampleRate: Int
    public var channels: Int
    public var gapMs: Int
    public var segments: [Segment]
    public var speakers: [Speaker]
    /// The clip or spoken line before the first message, when the conversation has one.
    public var intro: Bookend?
    /// The clip or spoken line after the last message, when the conversation has one.
    public var outro: Bookend?
    /// The music bed under the program, when the conversation has one.
    public var music: Music?
    /// The voices made from recordings that spoke in it (`kokoro:mom`, or each made part of a blend), by voice id: what
    /// each was made from.
    public var madeVoices: [String: MadeVoiceInfo]?

    /// Where the music bed is heard (from the first sample; to the end of the tail, or where a bed that does not loop
    /// ends) and how it was set: `gain_db` brought it to the target plus `level_lu`, `duck_db` lower under speech;
    /// `passes` is how many times it started.
    public struct Music: Codable, Sendable, Equatable {
        public var start: Double
        public var end: Double
        public var startSample: Int
        public var endSample: Int
        public var source: String
        public var levelLU: Double
        public var duckDB: Double
        public var gainDB: Double
        public var passes: Int

        public init(
            start: Double, end: Double, startSample: Int, endSample: Int, source: String, levelLU: Double, duckDB: Double,
            gainDB: Double, passes: Int
        ) {
            self.start = start
            self.end = end
            self.startSample = startSample
            self.endSample = endSample
            self.source = source
            self.levelLU = levelLU
            self.duckDB = duckDB
            self.gainDB = gainDB
            self.passes = passes
        }

        enum CodingKeys: String, CodingKey {
            case start, end
            case startSample = "start_sample"
            case endSample = "end_sample"
            case source
            case levelLU = "level_lu"
            case duckDB = "duck_db"
            case gainDB = "gain_db"
            case passes
        }
    }

    /// Where an intro or outro is: a segment's members without `index` (it is not a message); `speaker`, `text`,
    /// `voice` and `words` when it is a spoken line.
    public struct Bookend: Codable, Sendable, Equatable {
        public var start: Double
        public var end: Double
        public var startSample: Int
        public var endSample: Int
        public var speaker: String?
        public var text: String?
        public var source: String
        public var gainDB: Double
        public var voice: String?
        public var words: [Word]?

        public init(
            start: Double, end: Double, startSample: Int, endSample: Int, speaker: String?, text: String?, source: String,
            gainDB: Double, voice: String?, words: [Word]?
        ) {
            self.start = start
            self.end = end
            self.startSample = startSample
            self.endSample = endSample
            self.speaker = speaker
            self.text = text
            self.source = source
            self.gainDB = gainDB
            self.voice = voice
            self.words = words
        }

        enum CodingKeys: String, CodingKey {
            case start, end
            case startSample = "start_sample"
            case endSample = "end_sample"
            case speaker, text, source
            case gainDB = "gain_db"
            case voice, words
        }
    }

    public init(
        duration: Double, samples: Int, sampleRate: Int, channels: Int, gapMs: Int, segments: [Segment], speakers: [Speaker],
        intro: Bookend? = nil, outro: Bookend? = nil, music: Music? = nil, madeVoices: [String: MadeVoiceInfo]? = nil
    ) {
        self.madeVoices = madeVoices
        self.duration = duration
        self.samples = samples
        self.sampleRate = sampleRate
        self.channels = channels
        self.gapMs = gapMs
        self.segments = segments
        self.speakers = speakers
        self.intro = intro
        self.outro = outro
        self.music = music
    }

    enum CodingKeys: String, CodingKey {
        case duration, samples
        case sampleRate = "sample_rate"
        case channels
        case gapMs = "gap_ms"
        case segments, speakers, intro, outro, music
        case madeVoices = "made_voices"
    }
}

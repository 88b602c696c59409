/// A transcription in the shape OpenAI's `/v1/audio/transcriptions` answers with `response_format=verbose_json`
/// (so its SDKs read Chorus's answers as they are): the text, the language, the duration, and words and segments
/// with their times in seconds from the start of the audio.
public struct Transcription: Sendable, Equatable, Codable {
    public var task: String
    /// The language's English name in lower case, as OpenAI writes it (`english`).
    public var language: String
    public var duration: Double
    public var text: String
    public var words: [WordTiming]?
    public var segments: [Segment]?

    /// A stretch of speech: a sentence, or what is said between pauses (at most about a caption's length).
    public struct Segment: Sendable, Equatable, Codable {
        public var id: Int
        public var start: Double
        public var end: Double
        public var text: String

        public init(id: Int, start: Double, end: Double, text: String) {
            self.id = id
            self.start = start
            self.end = end
            self.text = text
        }
    }

    public init(language: String, duration: Double, text: String, words: [WordTiming]?, segments: [Segment]?) {
        task = "transcribe"
        self.language = language
        self.duration = duration
        self.text = text
        self.words = words
        self.segments = segments
    }

    /// Segments made from timed words: a segment ends after a word that ends a sentence, before a pause of
    /// `pause` seconds or more, or when it would grow past `maxCharacters` (captions stay readable).
    public static func segments(of words: [WordTiming], pause: Double = 0.8, maxCharacters: Int = 84) -> [Segment] {
        var segments: [Segment] = []
        var current: [WordTiming] = []
        func close() {
            guard let first = current.first, let last = current.last else { return }
            segments.append(Segment(id: segments.count, start: first.start, end: last.end, text: current.map(\.word).joined(separator: " ")))
            current.removeAll()
        }
        for word in words {
            if let last = current.last {
                let length = current.reduce(0) { $0 + $1.word.count + 1 } + word.word.count
                if word.start - last.end >= pause || length > maxCharacters { close() }
            }
            current.append(word)
            if let end = word.word.last, ".?!…".contains(end) { close() }
        }
        close()
        return segments
    }
}

/// The answers `/v1/audio/transcriptions` and `chorus transcribe` give (`response_format`).
public enum TranscriptionFormat: String, Sendable, CaseIterable, Codable {
    case text
    case json
    case verboseJSON = "verbose_json"
    case srt
    case vtt

    /// The media type of an answer in this format.
    public var mimeType: String {
        switch self {
        case .text: return "text/plain; charset=utf-8"
        case .json, .verboseJSON: return "application/json"
        case .srt: return "application/x-subrip"
        case .vtt: return "text/vtt; charset=utf-8"
        }
    }
}

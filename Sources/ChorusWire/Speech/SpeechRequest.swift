/// `POST /v1/speech`: one message as a render (same manifest and routes).
public struct SpeechRequest: Codable, Sendable, Equatable {
    public var text: String
    /// `provider:voice`.
    public var voice: String
    /// Output format (default mp3).
    public var format: String?
    /// Include word timings in the timeline when the voice has them (default true).
    public var words: Bool?
    /// A stored lexicon's name, or entries (as a render's `lexicon`).
    public var lexicon: JSONValue?

    public init(text: String, voice: String, format: String? = nil, words: Bool? = nil, lexicon: JSONValue? = nil) {
        self.lexicon = lexicon
        self.text = text
        self.voice = voice
        self.format = format
        self.words = words
    }
}

/// `POST /v1/audio/speech`, as OpenAI's clients send it.
public struct OpenAISpeechRequest: Codable, Sendable, Equatable {
    public var model: String
    public var input: String
    /// A Chorus voice id or an OpenAI voice name (`alloy`, `nova`, …).
    public var voice: String
    /// `mp3` (default), `opus`, `aac`, `flac`, `wav` or `pcm`.
    public var responseFormat: String?
    public var speed: Double?
    public var instructions: String?
    /// `audio` streams the bytes (OpenAI's `sse` is not offered).
    public var streamFormat: String?
    /// Chorus's own: a stored lexicon's name, or entries (OpenAI's SDKs send it as `extra_body`).
    public var lexicon: JSONValue?

    public init(
        model: String, input: String, voice: String, responseFormat: String? = nil, speed: Double? = nil,
        instructions: String? = nil, streamFormat: String? = nil, lexicon: JSONValue? = nil
    ) {
        self.lexicon = lexicon
        self.model = model
        self.input = input
        self.voice = voice
        self.responseFormat = responseFormat
        self.speed = speed
        self.instructions = instructions
        self.streamFormat = streamFormat
    }

    enum CodingKeys: String, CodingKey {
        case model, input, voice
        case responseFormat = "response_format"
        case speed, instructions
        case streamFormat = "stream_format"
        case lexicon
    }
}

public import ChorusAudio
public import ChorusText
public import ChorusWire
public import Foundation

/// A voice id: `provider:voice`, e.g. `espeak:en-us+f3`, `elevenlabs:JBFqnCBsd6RMkjVDRZzb`, `openai:nova`.
public struct VoiceID: Sendable, Hashable, CustomStringConvertible {
    public var provider: String
    public var voice: String

    public init(provider: String, voice: String) {
        self.provider = provider
        self.voice = voice
    }

    /// Parses `provider:voice`; `nil` when either side is empty.
    public init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        provider = String(text[..<colon]).lowercased()
        voice = String(text[text.index(after: colon)...])
        if provider.isEmpty || voice.isEmpty { return nil }
    }

    public var description: String { "\(provider):\(voice)" }

}

/// A voice a provider offers.
public struct VoiceInfo: Sendable, Equatable {
    public var id: VoiceID
    public var name: String
    /// Free-form details: language, accent, gender, description.
    public var details: String

    public init(id: VoiceID, name: String, details: String = "") {
        self.id = id
        self.name = name
        self.details = details
    }
}

/// One request to synthesize text.
public struct SynthesisRequest: Sendable, Equatable {
    /// The provider's own voice id (the part after `provider:`).
    public var voice: String
    public var text: String
    /// Provider settings from the conversation's `voice_settings[provider]`.
    public var settings: [String: JSONValue]
    /// Text spoken just before / after this chunk, for providers that use it for continuity.
    public var previousText: String?
    public var nextText: String?
    /// The output format to ask for (a value of `VoiceProvider.outputFormats(settings:)`).
    public var outputFormat: String
    /// Words of `text` to say from their IPA, for a provider that takes a pronunciation dictionary
    /// (`VoiceProvider.pronunciationDictionary(settings:)`).
    public var pronunciations: [Pronunciation]

    public init(
        voice: String, text: String, settings: [String: JSONValue] = [:], previousText: String? = nil,
        nextText: String? = nil, outputFormat: String, pronunciations: [Pronunciation] = []
    ) {
        self.pronunciations = pronunciations
        self.voice = voice
        self.text = text
        self.settings = settings
        self.previousText = previousText
        self.nextText = nextText
        self.outputFormat = outputFormat
    }
}

/// Audio a provider returned.
public enum SpeechAudio: Sendable {
    /// Decoded PCM (raw PCM responses, espeak-ng).
    case pcm(AudioBuffer)
    /// Encoded bytes (MP3, …) with the file extension that names their format.
    case encoded(Data, fileExtension: String)
}

/// A synthesized clip with word timings (seconds from the clip's start) when the provider has them.
public struct SynthesizedSpeech: Sendable {
    public var audio: SpeechAudio
    public var words: [WordTiming]?
    /// What the provider left out of the text or could not do as asked, for the render's warnings (kept with the
    /// cached clip, so every render of it says so).
    public var notes: [String]

    public init(audio: SpeechAudio, words: [WordTiming]?, notes: [String] = []) {
        self.audio = audio
        self.words = words
        self.notes = notes
    }
}

/// A text-to-speech service. Implementations: `EspeakProvider` (offline, default),
/// `PiperProvider`, `FliteProvider`, `ElevenLabsProvider`, `OpenAIProvider`.
///
/// ```swift
/// let speech = try await provider.synthesize(SynthesisRequest(voice: "en-us", text: "Hello", outputFormat: "pcm"))
/// ```
public protocol VoiceProvider: Sendable {
    /// The id used before the colon in voice ids.
    var id: String { get }
    /// Voices this provider offers (may ask the service).
    func voices() async throws -> [VoiceInfo]
    /// The most characters one request may carry with these settings.
    func characterLimit(settings: [String: JSONValue]) -> Int
    /// Whether the provider accepts `previousText`/`nextText` with these settings.
    func supportsContext(settings: [String: JSONValue]) -> Bool
    /// Output formats to ask for, preferred first (the next is used when the account may not use the first).
    func outputFormats(settings: [String: JSONValue]) -> [String]
    /// Everything besides voice, text and format that changes the audio: the cache key includes it.
    func audioAffectingSettings(_ settings: [String: JSONValue]) -> [String: JSONValue]
    /// What changes the audio of `voice` (the provider's own voice id) besides text and format: by default
    /// `audioAffectingSettings(_:)`; a provider whose voices are files (Piper) adds the file's identity and the
    /// settings resolved over the voice's defaults.
    func audioAffectingSettings(_ settings: [String: JSONValue], voice: String) -> [String: JSONValue]
    /// `voice` and `settings` speaking `rate` times the pace they would (SSML's `prosody rate`, 0.5–2): each provider
    /// through its own knob (Piper's `length_scale`, espeak-ng's and Flite's `?rate=`, OpenAI's `speed`, ElevenLabs'
    /// `speed` within its 0.7–1.2); by default unchanged.
    func adjusting(rate: Double, voice: String, settings: [String: JSONValue]) -> (voice: String, settings: [String: JSONValue])
    /// `settings` for text written in `language` (a conversation's `"language"` when it says one, a tag such as `es` or
    /// `en-GB`): a provider whose voices read text in whichever language they are told (Kokoro) is told this one where
    /// its settings say none; by default unchanged.
    func settings(_ settings: [String: JSONValue], forTextIn language: String) -> [String: JSONValue]
    /// For a provider whose engine takes phonemes inline (espeak-ng's `[[…]]`, Piper): how `voice` (the provider's own
    /// voice id) is given a word's IPA (`IPA.validated`) in its text, or `nil` for an IPA it cannot say; `nil` (the
    /// default) when it takes none — the word is then said through its alias, or as written.
    func phonemeMarkup(voice: String) -> (@Sendable (String) -> String?)?
    /// For a provider that says words from their IPA through a pronunciation dictionary sent with the request
    /// (`SynthesisRequest.pronunciations`: Flite's lexicon, ElevenLabs' phoneme rules): which pronunciations it takes
    /// with these settings (those words then stay as written); `nil` (the default) when it takes none. The one place
    /// that decides, so a pronunciation it cannot use keeps its alias.
    func pronunciationDictionary(settings: [String: JSONValue]) -> (@Sendable (Pronunciation) -> Bool)?
    /// Synthesizes one request; throws `VoiceError`.
    func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech
    /// Whether it synthesizes on this machine (espeak-ng, Flite, Piper): faster than fetching the result from a shared
    /// cache tier and free, so its clips are cached locally only. By default what `BuiltInProvider` says of its id.
    var isLocal: Bool { get }
    /// Whether its speech comes with each word's time (`SynthesizedSpeech.words`): all but OpenAI's shape, whose
    /// messages a render hears for their words, several to a window. By default true.
    var timesWords: Bool { get }
    /// The voices (its own ids) it offers speakers a conversation gives none, best first (`DefaultVoices`): `first`
    /// come before every other provider's `later` ones (Kokoro's blends). By default none.
    func defaultVoices() -> (first: [String], later: [String])
}

extension VoiceProvider {
    public func defaultVoices() -> (first: [String], later: [String]) { ([], []) }

    public func adjusting(rate: Double, voice: String, settings: [String: JSONValue]) -> (voice: String, settings: [String: JSONValue]) {
        (voice, settings)
    }

    public func settings(_ settings: [String: JSONValue], forTextIn language: String) -> [String: JSONValue] { settings }

    /// `voice` (`name?key=value&…`) with its query's `key` set to `value` (the other parameters kept in order).
    static func voice(_ voice: String, setting key: String, to value: String) -> String {
        let halves = voice.split(separator: "?", maxSplits: 1)
        var parameters = halves.count > 1 ? halves[1].split(separator: "&").map(String.init) : []
        parameters.removeAll { $0.hasPrefix(key + "=") }
        parameters.append("\(key)=\(value)")
        return String(halves.first ?? "") + "?" + parameters.joined(separator: "&")
    }

    /// The number `key` has in `voice`'s query, if any.
    static func voice(_ voice: String, number key: String) -> Double? {
        guard let query = voice.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        return query.split(separator: "&").first { $0.hasPrefix(key + "=") }.flatMap { Double($0.dropFirst(key.count + 1)) }
    }

    public func supportsContext(settings: [String: JSONValue]) -> Bool { false }
    public func phonemeMarkup(voice: String) -> (@Sendable (String) -> String?)? { nil }
    public func pronunciationDictionary(settings: [String: JSONValue]) -> (@Sendable (Pronunciation) -> Bool)? { nil }
    public var isLocal: Bool { BuiltInProvider(rawValue: id)?.isOffline ?? false }

    public var timesWords: Bool { true }
    public func audioAffectingSettings(_ settings: [String: JSONValue], voice: String) -> [String: JSONValue] {
        audioAffectingSettings(settings)
    }
}

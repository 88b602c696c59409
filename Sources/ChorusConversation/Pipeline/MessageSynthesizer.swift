import ChorusAudio
import ChorusOutbound
public import ChorusSpeech
import ChorusSupport
import ChorusText
import ChorusWire
import Foundation

/// A message whose audio now exists, ready for the renderer.
struct SourcedMessage: Sendable {
    var message: RenderMessage
    /// Cache entries it is made of; if it fails to decode, they are removed and it is synthesized again.
    var cacheKeys: [String]
}

/// A message that could not be synthesized: which one, with which voice, and why.
public struct SynthesisError: Error, CustomStringConvertible, Sendable {
    public var index: Int
    public var speaker: String
    public var voice: VoiceID
    public var underlying: VoiceError
    /// `intro` or `outro` when it is not a message.
    public var bookend: String?

    /// The conversation's field it is about: `messages[3]`, `intro`, `outro`.
    public var field: String { bookend ?? "messages[\(index)]" }

    public var description: String {
        if let bookend { return "\(bookend) (\(speaker), \(voice)): \(underlying)" }
        return "\(RenderMessage.subject(index: index, speaker: "\(speaker), \(voice)")): \(underlying)"
    }
}

/// Turns one message's text into audio through its provider: from the cache when it is there,
/// else through the provider's concurrency gate with retries, split into chunks the provider
/// accepts, with the fallback voice when the provider fails for good. Shared by every render of
/// a `Chorus` (gates and the format a provider accepted are per provider, not per render).
final class MessageSynthesizer: Sendable {
    let registry: VoiceRegistry
    let cache: SynthesisCache
    let retry: RetryPolicy
    private let gates: [String: ConcurrencyGate]
    private let formats = FormatPreferences()
    private let pool: WorkerPool

    init(registry: VoiceRegistry, cache: SynthesisCache, concurrency: Int, retry: RetryPolicy, pool: WorkerPool) {
        self.pool = pool
        self.registry = registry
        self.cache = cache
        self.retry = retry
        gates = Dictionary(uniqueKeysWithValues: registry.ids.map { ($0, ConcurrencyGate(limit: concurrency)) })
    }

    /// The text of the messages before and after one, when the same voice speaks them: providers that take context
    /// (`VoiceProvider.supportsContext`, ElevenLabs' `previous_text`/`next_text`) carry the prosody across.
    struct Neighbors: Sendable {
        var previous: String?
        var next: String?
        /// Context is the nearest part of a neighbor: at most this many characters of it.
        static let limit = 1_000

        init(previous: String? = nil, next: String? = nil) {
            self.previous = previous.map { String($0.suffix(Self.limit)) }
            self.next = next.map { String($0.prefix(Self.limit)) }
        }
    }

    /// Message `index` spoken by `voice` (or by the conversation's fallback voice if `voice` fails for good).
    /// - Parameters:
    ///   - neighbors: the same voice's messages either side (context for providers that take it; not for the fallback voice).
    ///   - fresh: skip the cache (its entries failed to decode).
    /// - Throws: `SynthesisError` naming the message, voice and reason; `CancellationError`.
    func synthesize(
        index: Int, message: Conversation.Message, voice: VoiceID, in conversation: Conversation,
        neighbors: Neighbors = Neighbors(), fresh: Bool, progress: JobProgress
    ) async throws -> SourcedMessage {
        let field = index >= 0 ? "messages[\(index)].text" : "text"
        do {
            return try await speak(
                Utterance(message, field: field, voice: voice, in: conversation, neighbors: neighbors), fresh: fresh, progress: progress)
        } catch let error as VoiceError {
            guard let fallbackVoice = conversation.fallbackVoice, fallbackVoice != voice else {
                throw SynthesisError(index: index, speaker: message.speaker, voice: voice, underlying: error)
            }
            progress.update { $0.fallbacks += 1 }
            do {
                return try await speak(
                    Utterance(message, field: field, voice: fallbackVoice, in: conversation, fallback: true), fresh: fresh,
                    progress: progress)
            } catch let second as VoiceError {
                throw SynthesisError(index: index, speaker: message.speaker, voice: fallbackVoice, underlying: second)
            }
        }
    }

    /// A message's text as one voice is to say it: `field` names the text in errors; the conversation's settings for
    /// the voice's provider, its lexicon and how it reads text; the same voice's neighbors (context); whether the
    /// voice is the fallback.
    private struct Utterance {
        let text: String
        let field: String
        let speaker: String
        let voice: VoiceID
        let settings: [String: JSONValue]
        let lexicon: Lexicon?
        let normalizing: Bool
        let reading: TextReading
        let neighbors: Neighbors
        let fallback: Bool

        init(
            _ message: Conversation.Message, field: String, voice: VoiceID, in conversation: Conversation, neighbors: Neighbors = Neighbors(),
            fallback: Bool = false
        ) {
            text = message.text ?? ""
            self.field = field
            speaker = message.speaker
            self.voice = voice
            settings = conversation.settings(for: voice.provider)
            lexicon = conversation.lexicon
            normalizing = conversation.normalizesText(for: voice.provider)
            reading = conversation.textReading
            self.neighbors = neighbors
            self.fallback = fallback
        }
    }

    /// A part of a message's text: said (as spoken, cut into the chunks the provider takes, at an SSML rate), or a pause.
    private enum Segment {
        case speech(SpokenForm, chunks: [String], rate: Double?)
        case pause(Double)
    }

    /// `utterance` spoken: its segments' chunks obtained (from the cache or the provider), then put together.
    private func speak(_ utterance: Utterance, fresh: Bool, progress: JobProgress) async throws -> SourcedMessage {
        let voice = utterance.voice
        let neighbors = utterance.neighbors
        let provider = try registry.provider(for: voice)
        let settings = utterance.reading.statedLanguage.map { provider.settings(utterance.settings, forTextIn: $0) } ?? utterance.settings
        let segments = try Self.segments(of: utterance, provider: provider)
        let chunks = segments.flatMap { segment -> [(text: String, rate: Double?, pronunciations: [Pronunciation])] in
            if case .speech(let form, let chunks, let rate) = segment { chunks.map { ($0, rate, form.pronunciations(in: $0)) } } else { [] }
        }
        guard !chunks.isEmpty else { throw VoiceError(.badRequest, provider: voice.provider, message: "no text to speak") }
        // Context (previous/next text) between the chunks, across pauses too, and from the same voice's messages either side.
        let context = provider.supportsContext(settings: settings)
        var pieces: [Piece] = []
        for (position, chunk) in chunks.enumerated() {
            let (voiceName, chunkSettings) =
                chunk.rate.map { provider.adjusting(rate: $0, voice: voice.voice, settings: settings) }
                ?? (voice.voice, settings)
            pieces.append(
                try await obtain(
                    chunk.text, pronunciations: chunk.pronunciations, provider: provider, voice: voiceName, settings: chunkSettings,
                    previous: context ? (position > 0 ? chunks[position - 1].text : neighbors.previous) : nil,
                    next: context ? (position + 1 < chunks.count ? chunks[position + 1].text : neighbors.next) : nil,
                    fresh: fresh, progress: progress))
        }
        return Self.assembled(segments, pieces: pieces, utterance: utterance)
    }

    /// The text between its pauses, as spoken (the lexicon's aliases in place of written words), each cut into chunks
    /// the provider accepts; a pause is exact silence between them. A text in SSML, or plain with `[pause:…]`
    /// controls: its parts, each said as people read it (lexicon, rules).
    private static func segments(of utterance: Utterance, provider: any VoiceProvider) throws -> [Segment] {
        let settings = utterance.settings
        let field = utterance.field
        let text = utterance.text
        let limit = provider.characterLimit(settings: settings)
        let dictionary = provider.pronunciationDictionary(settings: settings)
        let markup = provider.phonemeMarkup(voice: utterance.voice.voice)
        let parts: [SSML.Part] =
            SSML.isSSML(text)
            ? try SSML.parts(of: text, field: field)
            : try SpeechControls.parts(of: text, field: field).map { part in
                switch part {
                case .text(let written): return .text([SSML.Run(written: written, spoken: nil)], rate: nil)
                case .pause(let seconds): return .pause(seconds: seconds)
                }
            }
        return parts.map { part -> Segment in
            switch part {
            case .pause(let seconds): return .pause(seconds)
            case .text(let runs, let rate):
                let form = TextNormalizer.spokenForm(
                    of: runs, lexicon: utterance.lexicon, normalize: utterance.normalizing, reading: utterance.reading,
                    phonemeMarkup: markup, dictionary: dictionary)
                return .speech(form, chunks: TextChunker.chunks(form.spoken, limit: limit), rate: rate)
            }
        }
    }

    /// The message the pieces make: its audio (the pieces and pauses in order), and its words, timed from its start
    /// and shown as written, when the provider gave word times.
    private static func assembled(_ segments: [Segment], pieces: [Piece], utterance: Utterance) -> SourcedMessage {
        let voice = utterance.voice
        var words: [WordTiming] = []
        var anyWords = false
        var offset = 0.0
        var clipParts: [ClipPart] = []
        var next = 0
        for segment in segments {
            switch segment {
            case .pause(let seconds):
                clipParts.append(.silence(seconds: seconds))
                offset += seconds
            case .speech(let form, let segmentChunks, _):
                // The segment's words, timed from its start, shown as written, then placed in the message.
                var spokenWords: [WordTiming] = []
                var local = 0.0
                for piece in pieces[next..<(next + segmentChunks.count)] {
                    if let chunkWords = piece.entry.words {
                        anyWords = true
                        spokenWords += chunkWords.map { WordTiming(word: $0.word, start: $0.start + local, end: $0.end + local) }
                    }
                    clipParts.append(.file(piece.entry.audio))
                    local += piece.entry.duration
                }
                next += segmentChunks.count
                words += form.writtenWords(spokenWords).map { WordTiming(word: $0.word, start: $0.start + offset, end: $0.end + offset) }
                offset += local
            }
        }
        let source: ClipSource
        if pieces.count == 1 && clipParts.count == 1, let pcm = pieces[0].pcm {
            source = .pcm(pcm)
        } else {
            source = clipParts.count == 1 ? .file(pieces[0].entry.audio) : .parts(clipParts)
        }
        var rendered = RenderMessage(
            speaker: utterance.speaker, source: source, label: voice.description, text: Conversation.Message.shown(utterance.text),
            voice: voice.description, fallback: utterance.fallback, words: anyWords ? words : nil,
            expectedSourceFrames: pieces.map(\.entry.frames).reduce(0, +))
        var notes: [String] = []
        for note in pieces.flatMap(\.entry.notes) where !notes.contains(note) { notes.append(note) }
        rendered.notes = notes
        return SourcedMessage(message: rendered, cacheKeys: pieces.filter(\.fromCache).map(\.key))
    }

    /// One chunk's audio: a cache entry, plus the PCM itself when it was just synthesized.
    private struct Piece {
        var key: String
        var entry: SynthesisCache.Entry
        var pcm: AudioBuffer?
        var fromCache: Bool
    }

    /// One chunk: from the cache, else from the provider (trying its output formats in order).
    private func obtain(
        _ text: String, pronunciations: [Pronunciation], provider: any VoiceProvider, voice: String, settings: [String: JSONValue],
        previous: String?, next: String?, fresh: Bool, progress: JobProgress
    ) async throws -> Piece {
        let formatsToTry = provider.outputFormats(settings: settings)
        var affecting = provider.audioAffectingSettings(settings, voice: voice)
        if !pronunciations.isEmpty {
            // What the dictionary says changes the audio: part of the key (sorted, so their order does not matter).
            affecting["pronunciations"] = .array(
                pronunciations.map { "\($0.word)\u{1F}\($0.ipa)\u{1F}\($0.caseSensitive)" }.sorted().map(JSONValue.string))
        }
        if !pronunciations.isEmpty || text.contains(IPA.open) {
            affecting["ipa_revision"] = .number(Double(IPA.revision))  // how IPA becomes each engine's phonemes
        }
        func key(_ format: String) -> String {
            SynthesisCache.key(
                provider: provider.id, voice: voice, format: format, settings: affecting, text: text,
                previousText: previous, nextText: next)
        }
        if !fresh {
            for format in formatsToTry {
                let candidate = key(format)
                if let entry = cache.lookup(candidate) {
                    progress.update { $0.cacheHits += 1 }
                    ProviderMetrics.cacheHit(provider.id)
                    return Piece(key: candidate, entry: entry, pcm: nil, fromCache: true)
                }
            }
            // Then what another process stored in the shared tier, if there is one.
            for format in formatsToTry where cache.shared != nil && !provider.isLocal {
                let candidate = key(format)
                if let entry = await cache.lookupShared(candidate) {
                    progress.update { $0.cacheHits += 1 }
                    ProviderMetrics.cacheHit(provider.id)
                    return Piece(key: candidate, entry: entry, pcm: nil, fromCache: true)
                }
            }
        }
        var formatIndex = min(await formats.start(for: provider.id), formatsToTry.count - 1)
        let gate = gates[provider.id] ?? ConcurrencyGate(limit: 1)
        while true {
            let request = SynthesisRequest(
                voice: voice, text: text, settings: settings, previousText: previous,
                nextText: next, outputFormat: formatsToTry[formatIndex], pronunciations: pronunciations)
            do {
                let speech = try await retry.run(
                    { _ in
                        try await gate.run {
                            progress.update(announce: false) { $0.requests += 1 }
                            ProviderMetrics.request(provider.id)
                            return try await provider.synthesize(request)
                        }
                    }, classify: VoiceError.retryVerdict,
                    onRetry: { _, _, _ in
                        progress.update { $0.retries += 1 }
                        ProviderMetrics.retry(provider.id)
                    })
                let stored = key(request.outputFormat)
                do {
                    let (entry, samples) = try await pool.run { [cache] in
                        try cache.store(stored, speech: speech, voice: "\(provider.id):\(voice)")
                    }
                    if !provider.isLocal { await cache.publishShared(stored) }
                    return Piece(key: stored, entry: entry, pcm: samples, fromCache: false)
                } catch let error as AudioError {
                    throw VoiceError(.invalidResponse, provider: provider.id, message: "the returned audio is unusable: \(error)")
                }
            } catch let error as VoiceError where error.kind == .formatUnavailable && formatIndex + 1 < formatsToTry.count {
                formatIndex += 1
                await formats.remember(formatIndex, for: provider.id)
            }
        }
    }
}

/// The output format that worked for each provider, so later messages start with it.
actor FormatPreferences {
    private var preferred: [String: Int] = [:]

    func start(for provider: String) -> Int { preferred[provider] ?? 0 }
    func remember(_ index: Int, for provider: String) { preferred[provider] = max(preferred[provider] ?? 0, index) }
}

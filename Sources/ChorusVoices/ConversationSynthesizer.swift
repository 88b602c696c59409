public import ChorusAudio
import Foundation

/// Settings for turning text into speech.
public struct SynthesisOptions: Sendable {
    public var cache: SynthesisCache
    /// Requests in flight at once, per provider.
    public var concurrency: Int
    public var retry: RetryPolicy
    /// Voice used for a message whose provider failed permanently; `nil` fails the render instead.
    public var fallbackVoice: VoiceID?

    public init(cache: SynthesisCache, concurrency: Int = 4, retry: RetryPolicy = RetryPolicy(), fallbackVoice: VoiceID? = nil) {
        self.cache = cache
        self.concurrency = concurrency
        self.retry = retry
        self.fallbackVoice = fallbackVoice
    }
}

/// Where synthesis stands, reported as messages complete and retries happen.
public struct SynthesisProgress: Sendable {
    public var completed: Int
    public var total: Int
    public var cacheHits: Int
    public var requests: Int
    public var retries: Int
    public var fallbacks: Int
}

/// A message that could not be synthesized: which one, with which voice, and why.
public struct SynthesisError: Error, CustomStringConvertible, Sendable {
    public var index: Int
    public var speaker: String
    public var voice: VoiceID
    public var underlying: VoiceError

    public var description: String { "messages[\(index)] (\(speaker), \(voice)): \(underlying)" }
}

/// Turns a conversation's text-only messages into audio through the providers — cached, concurrent
/// within per-provider limits, retried, chunked when long, with an optional fallback voice — and
/// hands the renderer one `RenderMessage` per message (recorded clips pass through).
///
/// ```swift
/// let synthesizer = ConversationSynthesizer(registry: .standard(), options: SynthesisOptions(cache: cache))
/// let messages = try await synthesizer.renderMessages(for: conversation)
/// ```
public final class ConversationSynthesizer: Sendable {
    public let registry: VoiceRegistry
    public let options: SynthesisOptions
    private let counters = Counters()
    private let gates: [String: ConcurrencyGate]
    private let formats = FormatPreferences()

    public init(registry: VoiceRegistry, options: SynthesisOptions) {
        self.registry = registry
        self.options = options
        gates = Dictionary(uniqueKeysWithValues: registry.ids.map { ($0, ConcurrencyGate(limit: options.concurrency)) })
    }

    /// The voice of every message that will be synthesized (`nil` for recorded clips).
    ///
    /// A message's own `voice` wins over the `voices` map; speakers with neither get espeak-ng default
    /// voices in order of first appearance, skipping defaults the conversation already uses, so
    /// different speakers sound different and re-renders sound the same.
    public func voices(for conversation: Conversation) -> [VoiceID?] {
        var assigned: [String: VoiceID] = [:]
        var taken = Set(conversation.voices.values.compactMap(VoiceID.init) + conversation.messages.compactMap { $0.voice.flatMap(VoiceID.init) })
        var next = 0
        return conversation.messages.map { message in
            guard message.audio == nil else { return nil }
            if let own = message.voice.flatMap(VoiceID.init) { return own }
            if let mapped = conversation.voices[message.speaker].flatMap(VoiceID.init) { return mapped }
            if let existing = assigned[message.speaker] { return existing }
            let defaults = EspeakProvider.defaultVoices.map { VoiceID(provider: "espeak", voice: $0) }
            var voice = defaults[next % defaults.count]
            var tries = 0
            while taken.contains(voice) && tries < defaults.count {
                next += 1
                tries += 1
                voice = defaults[next % defaults.count]
            }
            next += 1
            taken.insert(voice)
            assigned[message.speaker] = voice
            return voice
        }
    }

    /// Render input for every message, synthesizing (or fetching from the cache) the text-only ones.
    /// - Throws: `SynthesisError` for the first message that failed without a usable fallback.
    public func renderMessages(for conversation: Conversation,
                               progress: (@Sendable (SynthesisProgress) -> Void)? = nil) async throws -> [RenderMessage] {
        let voices = voices(for: conversation)
        let total = voices.compactMap { $0 }.count
        await counters.reset(total: total, onChange: progress)
        defer { options.cache.evict() }
        return try await withThrowingTaskGroup(of: (Int, RenderMessage).self) { group in
            for (index, message) in conversation.messages.enumerated() {
                if let url = conversation.audioURL(of: index), let audio = message.audio {
                    group.addTask { (index, RenderMessage(speaker: message.speaker, source: .file(url), label: audio, text: message.text)) }
                    continue
                }
                let voice = voices[index]!
                group.addTask {
                    let settings = conversation.voiceSettings[voice.provider]?.object ?? [:]
                    let rendered = try await self.synthesize(index: index, message: message, voice: voice, settings: settings,
                                                             conversation: conversation)
                    await self.counters.completeMessage()
                    return (index, rendered)
                }
            }
            var results = [RenderMessage?](repeating: nil, count: conversation.messages.count)
            for try await (index, message) in group { results[index] = message }
            return results.map { $0! }
        }
    }

    /// One message in `voice` (for `chorus speak`).
    public func speak(_ text: String, voice: VoiceID, settings: [String: JSONValue] = [:], speaker: String = "Speaker") async throws -> RenderMessage {
        await counters.reset(total: 1)
        defer { options.cache.evict() }
        let message = ConversationMessage(speaker: speaker, text: text, voice: voice.description)
        let conversation = Conversation(messages: [message], baseDirectory: URL(fileURLWithPath: "/"), name: "speak")
        return try await synthesize(index: 0, message: message, voice: voice, settings: settings, conversation: conversation)
    }

    /// Counts so far (cache hits, requests, retries, fallbacks).
    public var statistics: SynthesisProgress { get async { await counters.snapshot } }

    private func synthesize(index: Int, message: ConversationMessage, voice: VoiceID, settings: [String: JSONValue],
                            conversation: Conversation) async throws -> RenderMessage {
        let text = message.text ?? ""
        do {
            return try await synthesize(text: text, speaker: message.speaker, voice: voice, settings: settings, fallback: false)
        } catch let error as VoiceError {
            guard let fallback = options.fallbackVoice, fallback != voice else {
                throw SynthesisError(index: index, speaker: message.speaker, voice: voice, underlying: error)
            }
            await counters.noteFallback()
            let fallbackSettings = conversation.voiceSettings[fallback.provider]?.object ?? [:]
            do {
                return try await synthesize(text: text, speaker: message.speaker, voice: fallback, settings: fallbackSettings, fallback: true)
            } catch let second as VoiceError {
                throw SynthesisError(index: index, speaker: message.speaker, voice: fallback, underlying: second)
            }
        }
    }

    private func synthesize(text: String, speaker: String, voice: VoiceID, settings: [String: JSONValue],
                            fallback: Bool) async throws -> RenderMessage {
        let provider = try registry.provider(for: voice)
        let chunks = TextChunker.chunks(text, limit: provider.characterLimit(settings: settings))
        guard !chunks.isEmpty else { throw VoiceError(.badRequest, provider: voice.provider, message: "no text to speak") }
        let context = chunks.count > 1 && provider.supportsContext(settings: settings)
        var files: [URL] = []
        var words: [WordTiming] = []
        var anyWords = false
        var offset = 0.0
        for (position, chunk) in chunks.enumerated() {
            let entry = try await obtain(chunk, provider: provider, voice: voice.voice, settings: settings,
                                         previous: context && position > 0 ? chunks[position - 1] : nil,
                                         next: context && position + 1 < chunks.count ? chunks[position + 1] : nil)
            files.append(entry.audio)
            if let chunkWords = entry.words {
                anyWords = true
                words += chunkWords.map { WordTiming(word: $0.word, start: $0.start + offset, end: $0.end + offset) }
            }
            offset += entry.duration
        }
        return RenderMessage(speaker: speaker, source: files.count == 1 ? .file(files[0]) : .files(files), label: voice.description,
                             text: text, voice: voice.description, fallback: fallback, words: anyWords ? words : nil)
    }

    /// One chunk: from the cache, else from the provider (trying its output formats in order).
    private func obtain(_ text: String, provider: any VoiceProvider, voice: String, settings: [String: JSONValue],
                        previous: String?, next: String?) async throws -> SynthesisCache.Entry {
        let formatsToTry = provider.outputFormats(settings: settings)
        let affecting = provider.audioAffectingSettings(settings)
        func key(_ format: String) -> String {
            SynthesisCache.key(provider: provider.id, voice: voice, format: format, settings: affecting, text: text,
                               previousText: previous, nextText: next)
        }
        for format in formatsToTry {
            if let entry = options.cache.lookup(key(format)) {
                await counters.noteCacheHit()
                return entry
            }
        }
        var formatIndex = min(await formats.start(for: provider.id), formatsToTry.count - 1)
        let gate = gates[provider.id] ?? ConcurrencyGate(limit: options.concurrency)
        while true {
            let request = SynthesisRequest(voice: voice, text: text, settings: settings, previousText: previous,
                                           nextText: next, outputFormat: formatsToTry[formatIndex])
            do {
                let speech = try await options.retry.run({
                    await self.counters.noteRequest()
                    return try await gate.run { try await provider.synthesize(request) }
                }, onRetry: { _, _, _ in await self.counters.noteRetry() })
                do {
                    return try options.cache.store(key(request.outputFormat), speech: speech, voice: "\(provider.id):\(voice)")
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

/// Shared counters behind `SynthesisProgress`.
actor Counters {
    private var progress = SynthesisProgress(completed: 0, total: 0, cacheHits: 0, requests: 0, retries: 0, fallbacks: 0)
    private var onChange: (@Sendable (SynthesisProgress) -> Void)?

    func reset(total: Int, onChange: (@Sendable (SynthesisProgress) -> Void)? = nil) {
        progress = SynthesisProgress(completed: 0, total: total, cacheHits: 0, requests: 0, retries: 0, fallbacks: 0)
        self.onChange = onChange
    }

    /// Counters change, then whoever watches hears of it (retries as they happen, not only when a message ends).
    private func changed() { onChange?(progress) }
    func completeMessage() { progress.completed += 1; changed() }
    func noteCacheHit() { progress.cacheHits += 1; changed() }
    func noteRequest() { progress.requests += 1 }
    func noteRetry() { progress.retries += 1; changed() }
    func noteFallback() { progress.fallbacks += 1; changed() }
    var snapshot: SynthesisProgress { progress }
}

/// The output format that worked for each provider, so later messages start with it.
actor FormatPreferences {
    private var preferred: [String: Int] = [:]

    func start(for provider: String) -> Int { preferred[provider] ?? 0 }
    func remember(_ index: Int, for provider: String) { preferred[provider] = max(preferred[provider] ?? 0, index) }
}

public import ChorusAudio
public import ChorusListening
public import ChorusOutbound
public import ChorusSpeech
public import ChorusSupport
public import Foundation

/// The one entry point from a conversation to its outputs: recorded clips and text alike.
///
/// A message is decoded and normalized as soon as its audio exists (a recorded clip at once, a
/// text message when the cache or its provider answers), a recorded one is then heard by the speech recognizer
/// (`Configuration.transcriber`) for its words, while the encoder takes finished messages in order; memory holds a
/// window of messages, not the conversation. CPU work runs on the
/// instance's worker threads, never on Swift's cooperative pool. One instance serves any number of
/// renders at once and shares its cache, provider gates and workers among them.
///
/// ```swift
/// let chorus = try Chorus()
/// let conversation = try Conversation.load(from: URL(fileURLWithPath: "samples/family-chat.json"))
/// for try await event in chorus.render(conversation, to: RenderOutputs(audio: URL(fileURLWithPath: "chat.mp3"))) {
///     if case .segment(let segment) = event { print(segment.speaker, segment.start) }
/// }
/// ```
public final class Chorus: Sendable {
    /// What a `Chorus` instance shares among its renders.
    public struct Configuration: Sendable {
        /// Voice providers (default: Kokoro, Piper, Flite and espeak-ng offline, ElevenLabs and OpenAI with keys from the
        /// environment, and the servers of a `CHORUS_PROVIDERS` file: `VoiceRegistry.standard()`).
        public var registry: VoiceRegistry
        /// The synthesis cache folder (default `SynthesisCache.defaultDirectory()`).
        public var cacheDirectory: URL
        /// Cache size limit in bytes; least recently used entries go first.
        public var cacheMaxBytes: Int
        /// A cache tier shared with other processes (the service's `--storage`), if any.
        public var sharedCache: (any SharedCacheStore)?
        /// Requests in flight at once per provider, across all renders.
        public var providerConcurrency: Int
        public var retry: RetryPolicy
        /// Threads for decode, normalize and encode work (default: one per core).
        public var workerThreads: Int
        /// The voices that speak speakers without one (default: the natural Kokoro and Piper voices, then Flite's and
        /// espeak-ng's).
        public var defaultVoices: DefaultVoices = .natural
        /// The speech recognizer that gives recorded messages their words (`Conversation.transcribe`): by default the
        /// offline Whisper model set-up installs, when it is there; `.off` for none.
        public var transcriber: Transcriber = .automatic

        /// Allowed per-provider concurrency.
        public static let concurrencyRange = 1...64
        public static let defaultProviderConcurrency = 4
        public static let defaultCacheMaxBytes = SynthesisCache.defaultMaxBytes

        public init(
            registry: VoiceRegistry = .standard(), cacheDirectory: URL = SynthesisCache.defaultDirectory(),
            cacheMaxBytes: Int = Configuration.defaultCacheMaxBytes,
            providerConcurrency: Int = Configuration.defaultProviderConcurrency,
            retry: RetryPolicy = RetryPolicy(), workerThreads: Int = ThreadBudget.machineCores
        ) {
            self.registry = registry
            self.cacheDirectory = cacheDirectory
            self.cacheMaxBytes = cacheMaxBytes
            self.providerConcurrency = providerConcurrency
            self.retry = retry
            self.workerThreads = workerThreads
        }
    }

    public let configuration: Configuration
    let synthesizer: MessageSynthesizer
    let listener: MessageListener
    let pool: WorkerPool

    /// Opens the cache and starts the worker threads.
    /// - Throws: `AudioError` about `concurrency` or the cache folder; `VoiceError.configuration` when the registry's
    ///   `CHORUS_PROVIDERS` file could not be used.
    public init(configuration: Configuration = Configuration()) throws {
        guard Configuration.concurrencyRange.contains(configuration.providerConcurrency) else {
            throw AudioError.invalid(
                "concurrency", configuration.providerConcurrency,
                "must be between \(Configuration.concurrencyRange.lowerBound) and \(Configuration.concurrencyRange.upperBound)")
        }
        if let error = configuration.registry.configurationError { throw error }
        self.configuration = configuration
        pool = WorkerPool(threads: configuration.workerThreads)
        let cache = try SynthesisCache(
            directory: configuration.cacheDirectory, maxBytes: configuration.cacheMaxBytes, shared: configuration.sharedCache)
        synthesizer = MessageSynthesizer(
            registry: configuration.registry, cache: cache, concurrency: configuration.providerConcurrency,
            retry: configuration.retry, pool: pool)
        // Transcripts beside the synthesized speech (also with `.off`: `transcribe(_:by:)` names a provider); without a
        // folder for them, recorded messages are heard every time.
        listener = MessageListener(
            transcriber: configuration.transcriber, cache: try? TranscriptCache(directory: configuration.cacheDirectory),
            pool: pool, retry: configuration.retry, gate: ConcurrencyGate(limit: configuration.providerConcurrency))
    }

    /// The transcript of `request` by `provider`, else the configured speech-to-text provider
    /// (`Configuration.transcriber`), through the same policies as renders: the concurrency limit, retries, and the
    /// transcript cache.
    ///
    /// ```swift
    /// let samples = try WhisperRecognizer.audio(fileAt: URL(fileURLWithPath: "note.m4a"))
    /// let transcript = try await chorus.transcribe(SpeechToTextRequest(samples: samples))
    /// ```
    /// - Parameters:
    ///   - request: The audio (mono at `WhisperRecognizer.sampleRate`) and its language, when known.
    ///   - provider: Who hears it (`Transcriber.remote`, a recognizer), instead of the configured one.
    ///   - cached: Whether a transcript of the same audio by the same model may come from the cache.
    /// - Throws: `VoiceError` naming the provider and the reason (`.configuration` when there is none); `CancellationError`.
    public func transcribe(_ request: SpeechToTextRequest, by provider: (any SpeechToTextProvider)? = nil, cached: Bool = true) async throws
        -> Transcript
    {
        guard !request.samples.isEmpty else { throw VoiceError(.badRequest, provider: "transcription", message: "no audio to transcribe") }
        return try await listener.transcript(of: request, options: ["sharpen"], cached: cached, by: provider)
    }

    /// The cache renders use.
    public var cache: SynthesisCache { synthesizer.cache }

    /// The threads this instance runs audio work on (for other CPU-heavy work of the same service).
    package var workerPool: WorkerPool { pool }

    /// A render of `conversation` into `outputs`. Nothing happens until it is iterated (or
    /// `result()` is awaited); cancelling the iterating task stops provider requests and the render
    /// and leaves no files behind.
    /// - Parameters:
    ///   - conversation: recorded clips, text, or both; its `gapMilliseconds` is the gap.
    ///   - options: sound and encoding settings (the conversation's `loudnessPreset`, if any, sets their target
    ///     loudness and true-peak ceiling).
    ///   - outputs: where the audio and side files go.
    public func render(_ conversation: Conversation, options: RenderOptions = RenderOptions(), to outputs: RenderOutputs) -> RenderRun {
        render(plan(conversation, options: options), to: outputs)
    }

    /// A render of `plan` into `outputs`, as `render(_:options:to:)` (which renders `plan(_:options:)`).
    public func render(_ plan: RenderPlan, to outputs: RenderOutputs) -> RenderRun {
        RenderRun(pipeline: RenderPipeline(chorus: self, plan: plan, outputs: outputs))
    }

    /// `conversation` resolved once for rendering with `options`: every voice assigned from the voices this instance
    /// has now (`allVoices(for:)`), and the conversation's loudness preset applied to `options`.
    public func plan(_ conversation: Conversation, options: RenderOptions = RenderOptions()) -> RenderPlan {
        var options = options
        if let preset = conversation.loudnessPreset { options.apply(preset) }
        let voices = allVoices(for: conversation)
        return RenderPlan(checked: conversation, voices: voices.messages, introVoice: voices.intro, outroVoice: voices.outro, options: options)
    }

    /// The voice of every message that will be synthesized (`nil` for recorded clips): a message's
    /// own `voice`, else the `voices` map, else one of the `defaultVoices`, in order of first appearance and
    /// by what the speaker sounds like (`VoiceAssignment`; a spoken intro's speaker is the first to appear).
    public func voices(for conversation: Conversation) -> [VoiceID?] { allVoices(for: conversation).messages }

    /// The voices of the messages (as `voices(for:)`) and of a spoken intro and outro (`nil` for a clip or none),
    /// assigned together in one pass.
    func allVoices(for conversation: Conversation) -> (messages: [VoiceID?], intro: VoiceID?, outro: VoiceID?) {
        var all = VoiceAssignment.voices(for: conversation, defaults: configuration.defaultVoices.voices(in: configuration.registry))
        let outro = conversation.outro == nil ? nil : all.removeLast()
        let intro = conversation.intro == nil ? nil : all.removeFirst()
        return (all, intro, outro)
    }
}

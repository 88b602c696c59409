import ChorusAudio
import ChorusListening
import ChorusOutbound
import ChorusSpeech
import ChorusSupport
import ChorusWire
import Foundation

/// A `Chorus` instance's speech-to-text: the configured provider (`Transcriber`) behind the same policies as the voices
/// — at most `providerConcurrency` calls at once, retries as the retry policy says (`Retry-After` honoured), and
/// transcripts cached by the audio, the provider's model and the options. Shared by every render of the instance and
/// by `Chorus.transcribe`.
///
/// For renders it gives recorded messages their words: what the provider heard in a message that came without text,
/// or the message's own text aligned to its recording. It listens to the processed message (trimmed and normalized,
/// mono at Whisper's rate), so its words are in the same time as the audio placed in the output.
struct MessageListener: Sendable {
    let transcriber: Transcriber
    let cache: TranscriptCache?
    let pool: WorkerPool
    let retry: RetryPolicy
    let gate: ConcurrencyGate

    /// What a recorded message gets.
    enum Heard: Sendable {
        /// Words in clip time (as `RenderMessage.words`); `text` when it is what the recognizer heard.
        case words([WordTiming], transcribedText: String?)
        /// Nothing to hear (silence, or less than a tenth of a second).
        case nothing
        /// No provider, or it failed on this message: the render goes on without words and warns.
        case unavailable(String)
    }

    /// The transcript of `request` by `provider` (else the configured one), from the cache when it is there.
    /// - Parameters:
    ///   - options: What else shapes the words, for the cache key.
    ///   - cached: Whether the answer may come from the cache (it is stored either way).
    ///   - provider: Who hears it instead of the configured provider.
    /// - Throws: `VoiceError` naming the provider (no provider: `.configuration`); `CancellationError`.
    func transcript(
        of request: SpeechToTextRequest, options: [String], cached: Bool = true,
        by provider: (any SpeechToTextProvider)? = nil
    ) async throws -> Transcript {
        func key(_ model: [String]) -> String { Self.key(request.samples, model: model, options: options, language: request.language) }
        // The cache first, before any model is loaded, when the model's identity can be told without loading it.
        if cached, let cache, let identity = provider?.modelIdentity ?? transcriber.identity(request.language),
            let transcript = cache.lookup(key(identity))
        {
            return transcript
        }
        let chosen: (any SpeechToTextProvider)? = if let provider { provider } else { try await transcriber.provide(request.language) }
        guard let provider = chosen else {
            throw VoiceError(.configuration, provider: "transcription", message: "no speech-to-text provider is configured")
        }
        let key = key(provider.modelIdentity)
        if cached, let transcript = cache?.lookup(key) { return transcript }
        let transcript = try await guarded { try await provider.transcribe(request) }
        cache?.store(key, transcript)
        return transcript
    }

    /// `call` (one provider or recognizer call) behind the instance's policies: at most `providerConcurrency` at once
    /// (the gate), retried as the retry policy says.
    private func guarded<Result: Sendable>(_ call: @escaping @Sendable () async throws -> Result) async throws -> Result {
        let gate = self.gate
        return try await retry.run({ _ in try await gate.run { try await call() } }, classify: VoiceError.retryVerdict)
    }

    /// Options that shape a render's transcripts (part of their cache key).
    private static let renderOptions = ["render", "sharpen"]

    /// What a recorded message is heard from: its processed audio as Whisper hears it (mono, 16 kHz) and how much
    /// trimming cut from its start (its words are in clip time). Small (64 KB a second), so the processed audio itself
    /// need not be kept while the message waits to be heard.
    struct Speech: Sendable {
        var samples: [Float]
        var leadingTrimSeconds: Double
    }

    /// `processed` as it is heard (CPU work: run it on the worker threads).
    static func speech(of processed: ProcessedMessage) throws -> Speech {
        Speech(samples: try processed.speech(sampleRate: WhisperRecognizer.sampleRate), leadingTrimSeconds: processed.leadingTrimSeconds)
    }

    /// Listens to `speech`, whose message has `text` (or none), in `language` (the conversation's, when it says one).
    /// - Throws: `CancellationError` only; every other failure is `.unavailable`.
    func listen(to speech: Speech, text: String?, language: String? = nil) async throws -> Heard {
        guard speech.samples.count >= WhisperRecognizer.sampleRate / 10 else { return .nothing }
        let transcript: Transcript
        do {
            transcript = try await self.transcript(of: SpeechToTextRequest(samples: speech.samples, language: language), options: Self.renderOptions)
        } catch let error where error is CancellationError || Task.isCancelled {
            throw CancellationError()
        } catch {
            return .unavailable("\(error)")
        }
        return try await heard(transcript, in: speech, text: text)
    }

    /// Whether messages are heard best together (`listen(together:language:)`): by the offline Whisper, whose window
    /// holds several short ones.
    var hearsTogether: Bool { transcriber.hearsTogether }

    /// What was heard in `speech` when that is known without hearing it (its transcript cached, or too short to hear);
    /// `nil` when it must be heard. Nothing is loaded.
    /// - Parameter spoken: Whether `text` is known to be what is said (a voice synthesized it): its alignment is looked
    ///   for first.
    /// - Throws: `CancellationError` only.
    func known(_ speech: Speech, text: String?, spoken: Bool = false, language: String?) async throws -> Heard? {
        guard speech.samples.count >= WhisperRecognizer.sampleRate / 10 else { return .nothing }
        guard let cache, let identity = transcriber.identity(language) else { return nil }
        if spoken, let text,
            let alignment = cache.lookup(Self.key(speech.samples, model: identity, options: Self.alignOptions(text), language: language))
        {
            return try await heard(alignment, in: speech, text: text)
        }
        guard let transcript = cache.lookup(Self.key(speech.samples, model: identity, language: language)) else { return nil }
        return try await heard(transcript, in: speech, text: text)
    }

    /// Listens to several messages at once, each as `listen(to:text:language:)` would: the offline Whisper hears short
    /// ones side by side in one window (`WhisperRecognizer.transcribe(together:language:sharpen:)`), and times the words
    /// of those whose text is `spoken` (synthesized) without transcribing them (`WhisperRecognizer.align(together:)`);
    /// another provider hears them one by one. Transcripts and alignments are cached one by one.
    /// - Throws: `CancellationError` only; every other failure makes each `.unavailable`.
    func listen(together messages: [(speech: Speech, text: String?, spoken: Bool)], language: String?) async throws -> [Heard] {
        let provider: any SpeechToTextProvider
        do {
            guard let chosen = try await transcriber.provide(language) else {
                throw VoiceError(.configuration, provider: "transcription", message: "no speech-to-text provider is configured")
            }
            provider = chosen
        } catch let error where error is CancellationError || Task.isCancelled {
            throw CancellationError()
        } catch {
            return messages.map { _ in .unavailable("\(error)") }
        }
        guard let recognizer = provider as? WhisperRecognizer else {
            return try await withThrowingTaskGroup(of: (Int, Heard).self) { group in
                for (index, message) in messages.enumerated() {
                    group.addTask { (index, try await listen(to: message.speech, text: message.text, language: language)) }
                }
                var heard = [Heard](repeating: .nothing, count: messages.count)
                for try await (index, result) in group { heard[index] = result }
                return heard
            }
        }
        let minimum = WhisperRecognizer.sampleRate / 10
        var heard = [Heard?](repeating: nil, count: messages.count)
        for index in messages.indices where messages[index].speech.samples.count < minimum { heard[index] = .nothing }
        // Synthesized texts aligned; what cannot be aligned is transcribed with the recordings.
        let spoken = messages.indices.compactMap { index in
            messages[index].spoken && heard[index] == nil ? messages[index].text.map { (index, $0) } : nil
        }
        if !spoken.isEmpty {
            let audios = spoken.map { (samples: messages[$0.0].speech.samples, text: $0.1) }
            // A failed alignment leaves its messages to be transcribed with the recordings (which still are heard).
            var alignments = [Transcript?](repeating: nil, count: spoken.count)
            do {
                alignments = try await guarded { try await recognizer.align(together: audios, language: language) }
            } catch let error where error is CancellationError || Task.isCancelled {
                throw CancellationError()
            } catch {}
            for ((index, text), alignment) in zip(spoken, alignments) {
                guard let alignment else { continue }
                let samples = messages[index].speech.samples
                cache?.store(Self.key(samples, model: recognizer.modelIdentity, options: Self.alignOptions(text), language: language), alignment)
                heard[index] = try await self.heard(alignment, in: messages[index].speech, text: text)
            }
        }
        // Each different audio once (the same recording twice is heard once, and gets the same words).
        var audios: [[Float]] = []
        var heardAs = [Int?](repeating: nil, count: messages.count)
        for (index, message) in messages.enumerated() where heard[index] == nil {
            if let same = audios.firstIndex(of: message.speech.samples) {
                heardAs[index] = same
            } else {
                heardAs[index] = audios.count
                audios.append(message.speech.samples)
            }
        }
        guard !audios.isEmpty else { return heard.map { $0 ?? .nothing } }
        let transcripts: [Transcript]
        do {
            let audios = audios
            transcripts = try await guarded { try await recognizer.transcribe(together: audios, language: language) }
        } catch let error where error is CancellationError || Task.isCancelled {
            throw CancellationError()
        } catch {
            return heard.map { $0 ?? .unavailable("\(error)") }
        }
        for (audio, transcript) in zip(audios, transcripts) {
            cache?.store(Self.key(audio, model: recognizer.modelIdentity, language: language), transcript)
        }
        for (index, message) in messages.enumerated() {
            guard let audio = heardAs[index] else { continue }
            heard[index] = try await self.heard(transcripts[audio], in: message.speech, text: message.text)
        }
        return heard.map { $0 ?? .nothing }
    }

    /// The options of a synthesized text's alignment (part of its cache key): the text it times.
    private static func alignOptions(_ text: String) -> [String] { renderOptions + ["aligned \(alignmentRevision)", text] }

    /// Raised when a change to how synthesized texts are aligned changes their words (cached alignments then miss).
    private static let alignmentRevision = 1

    /// The cache key of a transcript of `samples` by `model` in `language`, with `options` (a render's:
    /// `renderOptions`).
    private static func key(_ samples: [Float], model: [String], options: [String] = renderOptions, language: String?) -> String {
        TranscriptCache.key(audio: samples.withUnsafeBytes { Data($0) }, model: model, options: options + [language ?? ""])
    }

    /// What `transcript` of `speech` gives its message: `text` aligned to it when the message has text, else the words
    /// heard; in clip time.
    private func heard(_ transcript: Transcript, in speech: Speech, text: String?) async throws -> Heard {
        let rate = WhisperRecognizer.sampleRate
        let samples = speech.samples
        let shift = speech.leadingTrimSeconds
        func inClipTime(_ words: [WordTiming]) -> [WordTiming] {
            words.map { WordTiming(word: $0.word, start: $0.start + shift, end: $0.end + shift) }
        }
        if let text {
            let words = try await pool.run { SpeechOnsets.refine(transcript.aligned(to: text), samples: samples, rate: rate) }
            return words.isEmpty ? .nothing : .words(inClipTime(words), transcribedText: nil)
        }
        let heard = transcript.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !heard.isEmpty, !transcript.words.isEmpty else { return .nothing }
        return .words(inClipTime(transcript.words), transcribedText: heard)
    }
}

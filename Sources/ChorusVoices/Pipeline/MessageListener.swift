import ChorusAudio
import ChorusOutbound
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
    func transcript(of request: SpeechToTextRequest, options: [String], cached: Bool = true,
                    by provider: (any SpeechToTextProvider)? = nil) async throws -> Transcript {
        let chosen: (any SpeechToTextProvider)? = if let provider { provider } else { try await transcriber.provide() }
        guard let provider = chosen else {
            throw VoiceError(.configuration, provider: "transcription", message: "no speech-to-text provider is configured")
        }
        let audio = request.samples.withUnsafeBytes { Data($0) }
        let key = TranscriptCache.key(audio: audio, model: provider.modelIdentity, options: options + [request.language ?? ""])
        if cached, let transcript = cache?.lookup(key) { return transcript }
        let gate = self.gate
        let transcript = try await retry.run({ _ in
            try await gate.run { try await provider.transcribe(request) }
        }, classify: VoiceError.retryVerdict)
        cache?.store(key, transcript)
        return transcript
    }

    /// Options that shape a render's transcripts (part of their cache key).
    private static let renderOptions = ["render", "sharpen"]

    /// Listens to `processed`, whose message has `text` (or none).
    /// - Throws: `CancellationError` only; every other failure is `.unavailable`.
    func listen(to processed: ProcessedMessage, text: String?) async throws -> Heard {
        let rate = WhisperRecognizer.sampleRate
        let samples: [Float]
        let transcript: Transcript
        do {
            samples = try await pool.run { try processed.speech(sampleRate: rate) }
            guard samples.count >= rate / 10 else { return .nothing }
            transcript = try await self.transcript(of: SpeechToTextRequest(samples: samples), options: Self.renderOptions)
        } catch let error where error is CancellationError || Task.isCancelled {
            throw CancellationError()
        } catch {
            return .unavailable("\(error)")
        }
        let shift = processed.leadingTrimSeconds
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

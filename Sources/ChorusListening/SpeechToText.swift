import ChorusAudio
public import ChorusInference
public import Foundation

/// One audio to transcribe, as every speech-to-text provider gets it: mono samples at `WhisperRecognizer.sampleRate`
/// (what a local recognizer hears, and what word onsets are refined against), and the same samples as a 16-bit WAV
/// file (what a remote one uploads: lossless, and about 1 MB for 30 s).
public struct SpeechToTextRequest: Sendable {
    public var samples: [Float]
    /// ISO-639-1, when the caller knows it.
    public var language: String?

    public init(samples: [Float], language: String? = nil) {
        self.samples = samples
        self.language = language
    }

    /// Seconds of audio.
    public var duration: Double { Double(samples.count) / Double(WhisperRecognizer.sampleRate) }

    /// The samples as a WAV file (16-bit PCM, mono), encoded by the engine's own writer.
    /// - Throws: `AudioError` when the encoder fails.
    public func wav() throws -> Data {
        try AudioFileWriter.data(AudioBuffer(format: AudioFormat(sampleRate: WhisperRecognizer.sampleRate, channels: 1), samples: samples), as: .wav)
    }
}

/// The one reading of a `*_TRANSCRIPTION_MODEL` variable: unset or empty means the provider's default.
enum SpeechToTextModel {
    static func configured(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
}

/// A speech recognizer behind the same policies as the voices (`Chorus.Configuration.transcriber`): renders and
/// `chorus transcribe` call it through a concurrency gate and the retry policy, and cache what it answers by the
/// audio and `modelIdentity`. Offline Whisper (`WhisperRecognizer`), OpenAI (`OpenAISpeechToText`) and ElevenLabs
/// (`ElevenLabsSpeechToText`) are the three.
public protocol SpeechToTextProvider: Sendable {
    /// `whisper`, `openai`, `elevenlabs`: how errors, metrics and `--provider` name it.
    var id: String { get }
    /// What identifies the model in cache keys: its name, and for a local model the size and time of its files (a
    /// model replaced in place is another model).
    var modelIdentity: [String] { get }
    /// Whether it can be asked at all: a remote provider has its API key. A local model: always.
    var isConfigured: Bool { get }
    /// The transcript of `request`: text, language code, duration and every word timed in seconds of the audio.
    /// - Throws: `VoiceError` (retried by the caller when `VoiceError.retryVerdict` says so); `CancellationError`.
    func transcribe(_ request: SpeechToTextRequest) async throws -> Transcript
}

extension WhisperRecognizer: SpeechToTextProvider {
    public var id: String { "whisper" }
    public var isConfigured: Bool { true }
    /// The model's files, and how this version of Chorus decodes with them (`decodingRevision`).
    public var modelIdentity: [String] { model.identity + ["decoding \(Self.decodingRevision)"] }

    /// What `modelIdentity` is for model `name` in `models` as its files are now, told without loading or checking it
    /// (the same as a recognizer loaded from those files says): what lets cached transcripts be found first.
    public static func identity(ofModel name: String, in models: URL = ModelFolder.root()) -> [String] {
        let folder = models.appendingPathComponent(name, isDirectory: true)
        return [name] + WhisperModel.fileNames.map { ModelFolder.stamp(of: folder.appendingPathComponent($0)) } + ["decoding \(decodingRevision)"]
    }

    public func transcribe(_ request: SpeechToTextRequest) async throws -> Transcript {
        try await transcribe(request.samples, sampleRate: WhisperRecognizer.sampleRate, language: request.language)
    }
}

extension Transcript {
    /// A transcript from a provider that gave the text but no word times (OpenAI's newer models): its words timed by the
    /// aligner on the audio itself (`aligned(to:)` with no recognized words to anchor them, then onsets refined).
    static func timing(text: String, language: String, samples: [Float]) -> Transcript {
        let rate = WhisperRecognizer.sampleRate
        let untimed = Transcript(text: text, language: language, duration: Double(samples.count) / Double(rate), words: [])
        let words = SpeechOnsets.refine(untimed.aligned(to: text), samples: samples, rate: rate)
        return Transcript(text: text, language: language, duration: untimed.duration, words: words)
    }
}

import ChorusAudio
import ChorusVoices
import ChorusWire
import Foundation
import Logging

/// The service's offline recognizer and the one queue in front of it. The model is checked, loaded and tried on a
/// short test decode in the background at start (the service serves everything else meanwhile, and keeps serving it
/// if the model is bad); before each transcription its files are compared with what was loaded, so a model deleted
/// or replaced while the service runs is checked again (and loaded again) instead of trusted. At most `limit`
/// transcriptions wait or run at once; more are refused with 503 and `Retry-After`.
final class SpeechRecognition: @unchecked Sendable {
    /// What `/health` says.
    enum Status: Sendable, Equatable {
        case loading
        case ready(model: String)
        case unavailable(reason: String)
        case off
    }

    /// The models folder and the model in it (`transcriptionModel`), or `nil` when transcription is off.
    let folder: URL
    let modelName: String?
    private let threads: Int
    private let limit: Int
    private let pool: WorkerPool
    private let logger: Logger

    private let lock = NSLock()
    private var loaded: (recognizer: WhisperRecognizer, files: [String])?
    /// The last load that failed: what the model's folder held then, and the answer (given again at once while the
    /// folder stays as it was: a broken model is not loaded again for every request).
    private var failed: (folder: [String], error: ServiceError)?
    /// The load in flight, which every caller waits for (never two loads at once).
    private var loading: Task<WhisperRecognizer, any Error>?
    private var status: Status
    private var running = 0

    init(folder: URL, modelName: String?, threads: Int, limit: Int, pool: WorkerPool, logger: Logger) {
        self.folder = folder
        self.modelName = modelName
        self.threads = max(1, threads)
        self.limit = max(1, limit)
        self.pool = pool
        self.logger = logger
        status = modelName == nil ? .off : .loading
    }

    /// Starts loading the model in the background.
    func start() {
        guard modelName != nil else { return }
        Task { [self] in _ = try? await self.sharedLoad() }
    }

    /// What `/health` says of transcription.
    var health: TranscriptionHealth {
        switch lock.withLock({ status }) {
        case .loading: return TranscriptionHealth(status: "loading", model: modelName)
        case .ready(let model): return TranscriptionHealth(status: "ready", model: model)
        case .unavailable(let reason): return TranscriptionHealth(status: "unavailable", model: modelName, reason: reason)
        case .off: return TranscriptionHealth(status: "off")
        }
    }

    /// The recognizer, loaded (waiting for a load in flight, such as the start-up one) and with its files as they were
    /// when it was loaded; loaded again if they changed.
    /// - Throws: `ServiceError` 503 `transcription_unavailable` saying why (off, no model, a broken file).
    func recognizer() async throws -> WhisperRecognizer {
        guard let modelName else {
            throw ServiceError(.serviceUnavailable, "transcription_unavailable", "transcription is off on this service (transcriptionModel is off)")
        }
        let (current, failure) = lock.withLock { (loaded, failed) }
        if let current {
            let stamps = try await pool.run { current.recognizer.model.fileStamps }
            if stamps == current.files { return current.recognizer }
            logger.warning("the transcription model's files changed; checking and loading it again", metadata: ["model": .string(modelName)])
        } else if let failure {
            let folder = self.folder
            if try await pool.run({ WhisperModel.contents(of: folder.appendingPathComponent(modelName)) }) == failure.folder { throw failure.error }
        }
        return try await sharedLoad()
    }

    /// The load in flight, or a new one.
    private func sharedLoad() async throws -> WhisperRecognizer {
        let task: Task<WhisperRecognizer, any Error> = lock.withLock {
            if let loading { return loading }
            let task = Task { [self] in try await self.load() }
            loading = task
            return task
        }
        defer { lock.withLock { if loading == task { loading = nil } } }
        return try await task.value
    }

    /// Checks and loads the model, tries it on half a second of silence, and records the outcome.
    private func load() async throws -> WhisperRecognizer {
        guard let modelName else { throw ServiceError(.serviceUnavailable, "transcription_unavailable", "transcription is off") }
        let folder = self.folder, threads = self.threads
        let contents = try await pool.run { WhisperModel.contents(of: folder.appendingPathComponent(modelName)) }
        do {
            let (recognizer, stamps) = try await pool.run {
                let model = try WhisperModel.named(modelName, in: folder)
                let stamps = model.fileStamps
                let recognizer = try WhisperRecognizer(model: model, threads: threads)
                return (recognizer, stamps)
            }
            _ = try await recognizer.transcribe([Float](repeating: 0, count: WhisperRecognizer.sampleRate / 2))
            lock.withLock {
                loaded = (recognizer, stamps)
                failed = nil
                status = .ready(model: modelName)
            }
            logger.info("transcription ready", metadata: ["model": .string(modelName)])
            return recognizer
        } catch {
            let reason = Self.reason(error, folder: folder)
            let answer = ServiceError(.serviceUnavailable, "transcription_unavailable", "transcription is unavailable: \(reason)", retryAfter: 30)
            lock.withLock {
                loaded = nil
                failed = (contents, answer)
                status = .unavailable(reason: reason)
            }
            logger.warning("transcription unavailable", metadata: ["model": .string(modelName), "reason": .string(reason)])
            throw answer
        }
    }


    /// Why loading failed, without server paths: files are named from the models folder (`whisper-tiny.en/encoder.onnx`).
    static func reason(_ error: any Error, folder: URL) -> String {
        let text = (error as? VoiceError)?.message ?? "\(error)"
        return text.replacingOccurrences(of: folder.standardizedFileURL.path + "/", with: "")
            .replacingOccurrences(of: folder.path + "/", with: "")
            .replacingOccurrences(of: folder.standardizedFileURL.path, with: "the models folder")
            .replacingOccurrences(of: folder.path, with: "the models folder")
    }

    /// Runs `body` as one of at most `limit` transcriptions.
    /// - Throws: `ServiceError` 503 `overloaded` when `limit` are already waiting or running.
    func admitted<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let admitted = lock.withLock {
            guard running < limit else { return false }
            running += 1
            return true
        }
        guard admitted else {
            throw ServiceError(.serviceUnavailable, "overloaded", "the transcription queue is full (\(limit)); try again shortly", retryAfter: 2)
        }
        defer { lock.withLock { running -= 1 } }
        return try await body()
    }
}

/// The service's recognizer as the render engine's `Transcriber`, so renders and `/v1/audio/transcriptions` share one
/// model, one load and one answer when it is unavailable. The engine exists first (the recognizer runs its checks on the
/// engine's worker threads), so the recognition is attached once made; until then, and when transcription is off,
/// renders hear nothing.
final class RenderTranscriber: @unchecked Sendable {
    private let lock = NSLock()
    private var recognition: SpeechRecognition?

    /// Why renders get no words (the 503's message: no server path, no status code).
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    func attach(_ recognition: SpeechRecognition) { lock.withLock { self.recognition = recognition } }

    var transcriber: Transcriber {
        Transcriber { [self] in
            guard let recognition = lock.withLock({ self.recognition }), recognition.modelName != nil else { return nil }
            do {
                return try await recognition.recognizer()
            } catch let error as ServiceError {
                throw Unavailable(description: error.body.error.message)
            }
        }
    }
}

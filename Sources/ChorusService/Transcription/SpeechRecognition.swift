import ChorusAudio
import ChorusConversation
import ChorusListening
import ChorusSpeech
import ChorusSupport
import ChorusWire
import Foundation
import Logging

/// The service's offline recognizers and the one queue in front of them. Models are loaded by the process's one
/// loader (`WhisperLoader`, which the library and the command line use too): the default model (`transcriptionModel`)
/// in the background at start — the service serves everything else meanwhile, and keeps serving it if the model is
/// bad — and any other model of the models folder when a request first names it. Before each transcription the loader
/// compares the model's files with what it loaded, so a model deleted or replaced while the service runs is checked
/// again (and loaded again) instead of trusted; a broken one is answered with 503 naming the file and the reason, for
/// that model alone. At most `limit` transcriptions wait or run at once; more are refused with 503 and `Retry-After`.
final class SpeechRecognition: Sendable {
    /// What `/health` says of a model.
    enum Status: Sendable, Equatable {
        case loading
        case ready
        case unavailable(reason: String)
    }

    /// The models folder and the default model in it (`transcriptionModel`), or `nil` when transcription is off.
    let folder: URL
    let modelName: String?
    private let threads: Int
    private let limit: Int
    private let logger: Logger

    private struct State {
        /// Each model asked for, as it last was.
        var statuses: [String: Status] = [:]
        var running = 0
    }
    private let state: Locked<State>

    init(folder: URL, modelName: String?, threads: Int, limit: Int, logger: Logger) {
        self.folder = folder
        self.modelName = modelName
        self.threads = max(1, threads)
        self.limit = max(1, limit)
        self.logger = logger
        var initial = State()
        if let modelName { initial.statuses[modelName] = .loading }
        state = Locked(initial)
    }

    /// Starts loading the default model in the background.
    func start() {
        guard modelName != nil else { return }
        Task { [self] in _ = try? await self.recognizer() }
    }

    /// What `/health` says of transcription: the default model's state.
    var health: TranscriptionHealth {
        guard let modelName else { return TranscriptionHealth(status: "off") }
        return health(of: modelName)
    }

    /// What `/health` says of model `name`.
    func health(of name: String) -> TranscriptionHealth {
        switch state.withLock({ $0.statuses[name] }) {
        case .ready: return TranscriptionHealth(status: "ready", model: name)
        case .unavailable(let reason): return TranscriptionHealth(status: "unavailable", model: name, reason: reason)
        case .loading, nil: return TranscriptionHealth(status: "loading", model: name)
        }
    }

    /// Whether `name` is one of the offline models served: the default, or a model folder's name in the models folder.
    func serves(_ name: String) -> Bool {
        guard modelName != nil else { return false }
        if name == modelName { return true }
        guard ServiceConfiguration.modelName(name) != nil, !name.isEmpty, !name.hasPrefix(".") else { return false }
        return FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).appendingPathComponent("model.json").path)
    }

    /// The recognizer of model `name` (the default model when `nil`), loaded (waiting for a load in flight, such as the
    /// start-up one) with its files as they are.
    /// - Throws: `ServiceError` 503 `transcription_unavailable` saying why (off, no model, a broken file).
    func recognizer(named name: String? = nil) async throws -> WhisperRecognizer {
        guard let name = name ?? modelName else {
            throw ServiceError(.serviceUnavailable, .transcriptionUnavailable, "transcription is off on this service (transcriptionModel is off)")
        }
        do {
            let recognizer = try await WhisperLoader.shared.recognizer(named: name, in: folder, lanes: threads)
            record(.ready, for: name)
            return recognizer
        } catch {
            let reason = Self.reason(error, folder: folder)
            record(.unavailable(reason: reason), for: name)
            throw ServiceError(.serviceUnavailable, .transcriptionUnavailable, "transcription with \(name) is unavailable: \(reason)", retryAfter: 30)
        }
    }

    /// Records `status` for `name`, and logs a change.
    private func record(_ status: Status, for name: String) {
        let before = state.withLock { state -> Status? in
            let before = state.statuses[name]
            state.statuses[name] = status
            return before
        }
        guard before != status else { return }
        switch status {
        case .ready: logger.info("transcription ready", metadata: ["model": .string(name)])
        case .unavailable(let reason): logger.warning("transcription unavailable", metadata: ["model": .string(name), "reason": .string(reason)])
        case .loading: break
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
        let admitted = state.withLock { state in
            guard state.running < limit else { return false }
            state.running += 1
            return true
        }
        guard admitted else {
            throw ServiceError(.serviceUnavailable, .overloaded, "the transcription queue is full (\(limit)); try again shortly", retryAfter: 2)
        }
        defer { state.withLock { $0.running -= 1 } }
        return try await body()
    }
}

extension SpeechRecognition {
    /// Why renders get no words (the 503's message: no server path, no status code).
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// The default model as the render engine's `Transcriber`, so renders and `/v1/audio/transcriptions` share one
    /// model, one load and one answer when it is unavailable; `.off` when transcription is. Cached transcripts are
    /// found before the model is loaded (its identity is its files').
    var transcriber: Transcriber {
        guard let name = modelName else { return .off }
        let folder = self.folder
        return Transcriber(identity: { WhisperRecognizer.identity(ofModel: WhisperModel.model(for: $0, defaultModel: name, in: folder), in: folder) })
        { [self] language in
            do {
                return try await recognizer(named: WhisperModel.model(for: language, defaultModel: name, in: folder))
            } catch let error as ServiceError {
                throw Unavailable(description: error.body.error.message)
            }
        }
    }
}

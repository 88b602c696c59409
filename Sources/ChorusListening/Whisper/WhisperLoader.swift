import ChorusAudio
public import ChorusInference
import ChorusSupport
public import Foundation

/// The process's Whisper recognizers, the one loader of Whisper models for the library, the command line and the
/// service: one load per model folder and lane count (a recognizer holds a hundred megabytes and more, and every
/// `Chorus` of a process — the CLI's, a test's, a service's — can share it), on a thread of its own (never Swift's
/// cooperative pool: a load is a second of CPU work).
///
/// Before a recognizer is handed out its folder is looked at again (names, sizes and times of its files): a model
/// replaced or damaged in place is checked and loaded again instead of trusted. A load that failed is remembered with
/// what the folder held then, and its error given again at once while the folder stays as it was — a broken model is
/// not loaded again for every request; a model put in place or mended is.
public actor WhisperLoader {
    public static let shared = WhisperLoader()
    private let loader = WorkerPool(threads: 1, name: "whisper-load")
    private var loads: [Key: (stamp: [String], task: Task<WhisperRecognizer, any Error>)] = [:]
    /// The keys loaded, the one used longest ago first: at most `ThreadBudget.whisperModels` are kept (each keeps its
    /// lanes' threads and a hundred megabytes and more).
    private var used: [Key] = []

    private struct Key: Hashable {
        var folder: String
        var lanes: Int
    }

    /// The recognizer of model `name` in `models` with `lanes` lanes (`WhisperRecognizer.defaultLanes` unless told).
    /// - Throws: `VoiceError` (`.configuration`) naming the model file and the reason, for as long as the folder stays
    ///   as it is.
    public func recognizer(named name: String, in models: URL = ModelFolder.root(), lanes: Int? = nil) async throws -> WhisperRecognizer {
        let folder = models.appendingPathComponent(name, isDirectory: true)
        let key = Key(folder: folder.path, lanes: min(max(1, lanes ?? WhisperRecognizer.defaultLanes), WhisperRecognizer.mostLanes))
        let loader = self.loader
        // A listing and a few stats: microseconds, not worth a thread hop.
        let stamp = ModelFolder.contents(of: folder)
        used.removeAll { $0 == key }
        used.append(key)
        if let load = loads[key], load.stamp == stamp { return try await load.task.value }
        let task = Task {
            try await loader.run { try WhisperRecognizer(model: try WhisperModel.named(name, in: models), threads: key.lanes) }
        }
        loads[key] = (stamp, task)
        while used.count > ThreadBudget.whisperModels {
            loads[used.removeFirst()] = nil
        }
        return try await task.value
    }
}

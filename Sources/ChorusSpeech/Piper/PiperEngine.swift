import ChorusAudio
import ChorusInference
import ChorusSupport
import Foundation

/// The process's Piper voices: each voice loaded once (and again only when its folder changes), at most `mostLoaded`
/// at a time; they synthesize on the neural voices' threads (`SynthesisThreads`). Loads run on a thread of their own.
actor PiperEngine {
    static let shared = PiperEngine()

    /// Loaded voices kept at once; the one used longest ago goes first.
    static let mostLoaded = 4

    private let loader = WorkerPool(threads: 1, name: "piper-load")
    private var loads: [String: (stamp: [String], task: Task<PiperSynthesizer, any Error>)] = [:]
    private var used: [String] = []

    /// The synthesizer of `voice`, loaded once.
    /// - Throws: `VoiceError` (`.configuration`) naming the file and the reason, for as long as the folder stays as it is.
    func synthesizer(for voice: PiperVoice) async throws -> PiperSynthesizer {
        let key = voice.folder.path
        let stamp = ModelFolder.contents(of: voice.folder)
        used.removeAll { $0 == key }
        used.append(key)
        if let load = loads[key], load.stamp == stamp { return try await load.task.value }
        let loader = self.loader
        let task = Task { try await loader.run { try PiperSynthesizer(voice: voice) } }
        loads[key] = (stamp, task)
        while used.count > Self.mostLoaded {
            loads[used.removeFirst()] = nil
        }
        return try await task.value
    }
}

public import Foundation

/// Resemblyzer's speaker embedding computed the original way in Python (`speaker_referee.py`: librosa's mel frames,
/// Resemblyzer's partials, a NumPy LSTM on the checkpoint's weights), in the referee environment
/// `scripts/setup.sh --test` makes, as an independent referee of Chorus's speaker encoder. Never used by the product.
public enum SpeakerReferee {
    static var script: String { Repository.file("Tests/ChorusTestSupport/speaker_referee.py").path }

    /// One file's embedding.
    public struct Embedded: Sendable, Decodable {
        public var file: String
        public var samples: Int
        public var embedding: [Float]
    }

    /// The embeddings of `files` (16 kHz WAV, or raw mono float32 at 16 kHz named `.f32`), in order.
    /// - Throws: when the referee is not installed or fails.
    public static func embeddings(_ files: [URL]) async throws -> [Embedded] {
        let run = try await ToolRun.run([WhisperReferee.python.path, script, "embed", "ge2e"] + files.map(\.path))
        guard run.status == 0 else { throw Referee.RefereeFailure(description: "speaker_referee.py failed: \(run.errors.suffix(600))") }
        return try JSONDecoder().decode([Embedded].self, from: run.data)
    }

    /// Resemblyzer's mel power frames of `samples` (mono, 16 kHz), frame after frame, 40 values each.
    public static func mels(_ samples: [Float]) async throws -> [Float] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-speaker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let input = scratch.appendingPathComponent("audio.f32")
        let output = scratch.appendingPathComponent("mels.f32")
        try samples.withUnsafeBufferPointer { try Data(buffer: $0).write(to: input) }
        let run = try await ToolRun.run([WhisperReferee.python.path, script, "mels", input.path, output.path])
        guard run.status == 0 else { throw Referee.RefereeFailure(description: "speaker_referee.py failed: \(run.errors.suffix(600))") }
        return try Data(contentsOf: output).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}

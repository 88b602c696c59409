public import ChorusWire
public import Foundation

/// faster-whisper (PyPI, in the virtual environment `scripts/setup.sh --test` makes) as an independent referee of
/// Chorus's Whisper: the same weights heard by another implementation (`whisper_referee.py`). Never used by the product.
public enum WhisperReferee {
    /// The referee's Python.
    public static var python: URL {
        let cache =
            ProcessInfo.processInfo.environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return cache.appendingPathComponent("chorus/setup/referee-venv/bin/python")
    }

    static var script: String { Repository.file("Tests/ChorusTestSupport/whisper_referee.py").path }

    /// What faster-whisper heard.
    public struct Heard: Sendable, Decodable {
        public var language: String
        public var text: String
        public var words: [WordTiming]

        enum CodingKeys: String, CodingKey { case language, text, words }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            language = try container.decode(String.self, forKey: .language)
            text = try container.decode(String.self, forKey: .text)
            var list = try container.nestedUnkeyedContainer(forKey: .words)
            var words: [WordTiming] = []
            while !list.isAtEnd {
                var entry = try list.nestedUnkeyedContainer()
                let word = try entry.decode(String.self)
                let start = try entry.decode(Double.self)
                let end = try entry.decode(Double.self)
                words.append(WordTiming(word: word.trimmingCharacters(in: .whitespaces), start: start, end: end))
            }
            self.words = words
        }
    }

    /// faster-whisper's greedy transcription (int8) of `file` with model `model` (`tiny.en`, `base`: set-up's weights).
    /// - Throws: when the referee is not installed or fails.
    public static func transcribe(_ file: URL, model: String, language: String? = nil) async throws -> Heard {
        let run = try await ToolRun.run([python.path, script, "transcribe", model, file.path] + (language.map { ["--language", $0] } ?? []))
        guard run.status == 0 else { throw Referee.RefereeFailure(description: "faster-whisper failed: \(run.errors.suffix(600))") }
        return try JSONDecoder().decode(Heard.self, from: run.data)
    }

    /// faster-whisper's transcriptions of `files` (one load of the model for all), in order.
    public static func transcribe(_ files: [URL], model: String, language: String? = nil) async throws -> [Heard] {
        guard files.count > 1 else { return [try await transcribe(files[0], model: model, language: language)] }
        let run = try await ToolRun.run(
            [python.path, script, "transcribe", model] + files.map(\.path) + (language.map { ["--language", $0] } ?? []))
        guard run.status == 0 else { throw Referee.RefereeFailure(description: "faster-whisper failed: \(run.errors.suffix(600))") }
        return try JSONDecoder().decode([Heard].self, from: run.data)
    }

    /// Each of `texts` in token ids, as model `model`'s own tokenizer (Hugging Face's `tokenizers`, faster-whisper's)
    /// writes it.
    public static func tokens(_ texts: [String], model: String) async throws -> [[Int]] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-referee-\(UUID().uuidString).json")
        try JSONEncoder().encode(texts).write(to: scratch)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let run = try await ToolRun.run([python.path, script, "tokens", model, scratch.path])
        guard run.status == 0 else { throw Referee.RefereeFailure(description: "the tokenizer failed: \(run.errors.suffix(600))") }
        return try JSONDecoder().decode([[Int]].self, from: run.data)
    }

    /// faster-whisper's log-mel features of `samples` (mono 16 kHz, 10 ms of silence after, as it pads), `bands` × frames.
    public static func features(_ samples: [Float], bands: Int = 80) async throws -> [Float] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-referee-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let input = scratch.appendingPathComponent("audio.f32")
        let output = scratch.appendingPathComponent("features.f32")
        try samples.withUnsafeBufferPointer { try Data(buffer: $0).write(to: input) }
        let run = try await ToolRun.run([python.path, script, "features", input.path, output.path, "--bands", String(bands)])
        guard run.status == 0 else { throw Referee.RefereeFailure(description: "faster-whisper failed: \(run.errors.suffix(600))") }
        return try Data(contentsOf: output).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}

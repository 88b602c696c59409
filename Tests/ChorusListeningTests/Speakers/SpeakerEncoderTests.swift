import ChorusAudio
import ChorusFixtures
import ChorusSpeech
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusListening

/// The speaker-embedding model set-up converts from Resemblyzer's weights (`scripts/prepare_speaker.py`), run on
/// ONNX Runtime, against Resemblyzer's own way of computing it (`speaker_referee.py`) on real human recordings.
@Suite("Speaker embeddings (Resemblyzer's GE2E on ONNX Runtime)")
struct SpeakerEncoderTests {
    /// Recordings of 16 kHz: an audiobook reader's two sentences and a 1961 speech.
    static func recordings() throws -> [URL] {
        let clips = try HumanSpeech.clips(language: "en")
        return try ["pocketsphinx/librivox-0890", "pocketsphinx/librivox-0920", "whisper-cpp/jfk"].map { id in
            try #require(clips.first { $0.id == id }, "\(id) is not in the human corpus").url
        }
    }

    static func samples(_ file: URL) throws -> [Float] {
        try AudioFileReader(url: file, outputFormat: AudioFormat(sampleRate: SpeakerModel.sampleRate, channels: 1)).readAll().samples
    }

    @Test("the mel frames are Resemblyzer's (librosa's) on real speech")
    func features() async throws {
        let encoder = try SpeakerEncoder.shared()
        let samples = try Self.samples(try Self.recordings()[0])
        let ours = encoder.features(samples)
        let theirs = try await SpeakerReferee.mels(samples)
        try #require(ours.count == theirs.count, "\(ours.count) values, the referee's \(theirs.count)")
        var worst = 0.0
        for (a, b) in zip(ours, theirs) { worst = max(worst, Double(abs(a - b)) / (Double(abs(b)) + 1e-4)) }
        #expect(worst < 1e-3, "largest relative difference \(worst)")
    }

    @Test("embeddings match Resemblyzer's on real speech; one reader's two sentences are nearer than two people")
    func embeddings() async throws {
        let encoder = try SpeakerEncoder.shared()
        let files = try Self.recordings()
        let ours = try files.map { try encoder.embedding(of: try Self.samples($0)) }
        let theirs = try await SpeakerReferee.embeddings(files)
        for (index, (a, b)) in zip(ours, theirs).enumerated() {
            #expect(a.count == SpeakerModel.width)
            #expect(SpeakerEncoder.similarity(a, b.embedding) > 0.9999, "\(files[index].lastPathComponent)")
            #expect(abs(a.reduce(0) { $0 + $1 * $1 } - 1) < 1e-4)
        }
        let sameReader = SpeakerEncoder.similarity(ours[0], ours[1])
        let twoPeople = max(SpeakerEncoder.similarity(ours[0], ours[2]), SpeakerEncoder.similarity(ours[1], ours[2]))
        #expect(sameReader > 0.8 && twoPeople < 0.65 && sameReader > twoPeople + 0.2, "\(sameReader) \(twoPeople)")
    }

    @Test("partial embeddings cover the audio as Resemblyzer's compute_partial_slices does")
    func partials() {
        // 1.6 s: one partial; 11 s at 16 kHz: 1101 frames, a partial every 77 frames while a whole one fits, the last
        // kept only when three quarters of it is audio.
        #expect(SpeakerEncoder.partials(samples: 25_600) == [0..<160])
        #expect(SpeakerEncoder.partials(samples: 100).count == 1)
        let long = SpeakerEncoder.partials(samples: 176_000)
        #expect(long.first == 0..<160 && long.allSatisfy { $0.count == 160 })
        #expect(long.count == 13 && long.last == 924..<1084, "\(long)")
    }

    @Test("a missing or broken model is refused naming the file; no audio is refused by name")
    func brokenModel() throws {
        let folder = try TemporaryDirectory()
        #expect(throws: VoiceError.self) { try SpeakerModel(folder: folder.url) }
        do {
            _ = try SpeakerModel(folder: folder.url)
        } catch let error as VoiceError {
            #expect(error.kind == .configuration && error.message.contains(folder.url.path) && error.message.contains("setup"))
        }
        let real = SpeakerModel.folder()
        for name in ["model.json"] {
            try FileManager.default.copyItem(at: real.appendingPathComponent(name), to: folder.file(name))
        }
        try Data(try Data(contentsOf: real.appendingPathComponent("model.onnx")).prefix(10_000)).write(to: folder.file("model.onnx"))
        do {
            _ = try SpeakerEncoder(model: try SpeakerModel(folder: folder.url))
            Issue.record("a truncated model was loaded")
        } catch let error as VoiceError {
            #expect(error.kind == .configuration && error.message.contains(folder.file("model.onnx").path), "\(error)")
        }
        try Data("{\"chorus_revision\": 99}".utf8).write(to: folder.file("model.json"))
        #expect(throws: VoiceError.self) { try SpeakerModel(folder: folder.url) }
        #expect(throws: VoiceError.self) { try SpeakerEncoder.shared().embedding(of: []) }
    }
}

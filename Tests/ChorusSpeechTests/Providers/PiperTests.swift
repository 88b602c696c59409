import ChorusFixtures
import ChorusSpeechTestSupport
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusInference
@testable import ChorusSpeech
@testable import ChorusText
@testable import ChorusWire

/// Natural offline voices: the Piper voice set-up prepares (`scripts/prepare_piper.py`), run in process on ONNX
/// Runtime. Real phonemes in, real audio out, heard back by the Whisper model; broken voices refused before the runtime
/// sees them.
///
/// The voice alone (its speech: `PiperSpeech`); what the Whisper model hears of it is tested in ChorusListeningTests.
@Suite("Piper voices (ONNX Runtime)")
struct PiperTests {
    @Test("set-up's voice opens with its metadata, its noise fixed, and says what its licence is")
    func installedVoice() async throws {
        let voice = try PiperVoice.named(PiperSpeech.voice)
        #expect(voice.sampleRate == 22_050 && voice.espeakVoice == "en-us" && voice.speakers == 1 && voice.language == "en_US")
        #expect(voice.licence.contains("research") && voice.licence.contains("lessac"))
        #expect(try ONNXModelFile(url: voice.model).metadata["chorus_fixed_noise"] == "2")
        let listed = try await PiperProvider().voices()
        let joe = try #require(listed.first { $0.id.description == "piper:\(PiperSpeech.voice)" })
        #expect(joe.details.contains("22050 Hz") && joe.details.contains("1 speaker") && joe.details.contains("licence"))
    }

    @Test("words are timed by the voice's own phoneme durations: numbers, joined words and clauses each in place")
    func phonemeTimes() async throws {
        let text = "Meet me at 4:30, of course. It costs $12.50 for the two of us!"
        let (buffer, words) = try await PiperSpeech.speak(text)
        #expect(words.map(\.word) == WordAligner.words(in: text).map(\.word))
        #expect(zip(words, words.dropFirst()).allSatisfy { $0.end <= $1.start + 1e-9 && $0.start < $0.end }, "\(words)")
        #expect(words.last.map { $0.end <= buffer.duration + 1e-6 } == true)
        // "4:30" is said as two words, so it lasts longer than "at"; the comma's pause is not part of "4:30".
        let at = try #require(words.first { $0.word == "at" })
        let time = try #require(words.first { $0.word == "4:30" })
        let of = try #require(words.first { $0.word == "of" })
        #expect(time.end - time.start > 2 * (at.end - at.start), "\(at) \(time)")
        #expect(of.start - time.end > 0.05, "the pause after the comma: \(time) \(of)")
        // Where a word's time comes from: the graph's `durations` output gives the frames of each id (start, pad, each
        // phoneme and a pad, end); samples are frames × the hop.
        let voice = try PiperVoice.named(PiperSpeech.voice)
        let hop = 4
        let frames: [Float] = [2, 1, 3, 1, 2, 1, 5]
        let samples = [Float](repeating: 0.5, count: Int(frames.reduce(0, +)) * hop)
        let spoken = try PiperSynthesizer.split(samples: samples, frames: frames, known: ["a", "b"], voice: voice)
        #expect(spoken.samples.count == 60 && spoken.phonemes.map(\.samples) == [12..<28, 28..<40] && spoken.speechEnd == 40)
        for (broken, brokenFrames) in [(Array(samples.dropLast()), frames), (samples, Array(frames.dropLast())), (samples, frames.map { $0 + 0.5 })] {
            let error = #expect(throws: VoiceError.self) {
                try PiperSynthesizer.split(samples: broken, frames: brokenFrames, known: ["a", "b"], voice: voice)
            }
            #expect(error?.kind == .configuration && error?.message.contains("setup.sh") == true, "\(String(describing: error))")
        }
    }

    @Test("the same text gives the same samples, in one call or four at once (one synthesizer shared by threads)")
    func sameAudio() async throws {
        let (first, _) = try await PiperSpeech.speak()
        let (second, _) = try await PiperSpeech.speak()
        #expect(first.samples == second.samples)
        let parallel = try await withThrowingTaskGroup(of: [Float].self) { group in
            for _ in 0..<4 { group.addTask { try await PiperSpeech.speak().0.samples } }
            var results: [[Float]] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(parallel.count == 4 && parallel.allSatisfy { $0 == first.samples })
    }

    @Test("length_scale slows the voice down in proportion; noise settings change the sound; bad settings are named")
    func settings() async throws {
        let (normal, _) = try await PiperSpeech.speak()
        let (slow, _) = try await PiperSpeech.speak(settings: ["length_scale": .number(1.5)])
        #expect((1.3...1.7).contains(slow.duration / normal.duration), "\(slow.duration / normal.duration)")
        let (flat, _) = try await PiperSpeech.speak(settings: ["noise_scale": .number(0), "noise_w": .number(0)])
        #expect(flat.samples != normal.samples && flat.duration > 2)
        for (settings, named) in [
            (["length_scale": JSONValue.number(9)], "length_scale"), (["noise_w": .string("x")], "noise_w"),
            (["pitch": .number(1)], "pitch"), (["speaker": .number(3)], "speaker"),
        ] {
            let error = await #expect(throws: VoiceError.self) { try await PiperSpeech.speak(settings: settings) }
            #expect(error?.kind == .badRequest && error?.message.contains(named) == true, "\(String(describing: error))")
        }
        // What the cache key carries: the voice's file and the settings resolved over its defaults.
        let provider = PiperProvider()
        let defaults = provider.audioAffectingSettings([:], voice: PiperSpeech.voice)
        #expect(defaults["length_scale"] == .number(1) && defaults["model"]?.string?.count == 64)
        #expect(provider.audioAffectingSettings(["length_scale": .number(1)], voice: PiperSpeech.voice) == defaults)
    }

    @Test("emoji, symbols, a very long word and text with nothing to say give audio or an error naming the reason")
    func hostileText() async throws {
        let (emoji, _) = try await PiperSpeech.speak("🙂 ✓ © ½")
        #expect(emoji.duration > 0.2)
        let (long, words) = try await PiperSpeech.speak(String(repeating: "abc", count: 400) + ".")
        #expect(long.duration > 1 && words.count == 1)
        let error = await #expect(throws: VoiceError.self) { try await PiperSpeech.speak("... !!! ,,,") }
        #expect(error?.kind == .badRequest && error?.message.contains("espeak-ng") == true)
        #expect(PiperProvider.pieces(of: String(repeating: "ab ", count: 300), most: 400).allSatisfy { $0.count <= 400 && !$0.isEmpty })
        #expect(PiperProvider.pieces(of: String(repeating: "x", count: 900), most: 400).map(\.count) == [400, 400, 100])
    }

    @Test("espeak-ng's phonemes come a sentence at a time, each clause's punctuation kept")
    func phonemes() async throws {
        let sentences = try await EspeakEngine.shared.phonemes("Hello, world. How are you? Fine!", voice: "en-us")
        #expect(sentences.count == 3, "\(sentences)")
        #expect(sentences.first?.contains(", ") == true && sentences.first?.hasSuffix(".") == true)
        #expect(sentences.last?.hasSuffix("!") == true)
        #expect(EspeakEngine.withoutLanguageFlags("(fr)bɔ̃ʒuʁ(en)") == "bɔ̃ʒuʁ")
        let clauses = EspeakEngine.clauses(of: "It costs 3.5 dollars, e.g. \"cheap!\" Right…\nNext line")
        #expect(clauses.map(\.text) == ["It costs 3.5 dollars", "e.g", "\"cheap\"", "Right", "Next line"], "\(clauses)")
        #expect(clauses.map(\.mark) == [",", ".", "!", ".", nil])
    }

    @Test("a broken voice folder is refused with the file and the reason, before the runtime sees it or when it refuses it")
    func brokenVoices() async throws {
        let scratch = try TemporaryDirectory(prefix: "chorus-piper")
        let installed = try PiperVoice.named(PiperSpeech.voice)
        func make(_ name: String, model: Data?, tokens: String? = nil, revision: Int = PiperVoice.revision) throws -> URL {
            let folder = scratch.url.appendingPathComponent(name, isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var description =
                try JSONSerialization.jsonObject(with: Data(contentsOf: installed.folder.appendingPathComponent("voice.json"))) as! [String: Any]
            description["chorus_revision"] = revision
            try JSONSerialization.data(withJSONObject: description).write(to: folder.appendingPathComponent("voice.json"))
            if let model { try model.write(to: folder.appendingPathComponent("model.onnx")) }
            try (tokens ?? String(contentsOf: installed.tokens, encoding: .utf8)).write(
                to: folder.appendingPathComponent("tokens.txt"), atomically: true, encoding: .utf8)
            return folder
        }
        let good = ["chorus_piper": "1", "n_speakers": "1", "sample_rate": "22050", "chorus_revision": String(PiperVoice.revision)]
        let graph = (inputs: ["input", "input_lengths", "scales"], outputs: ["output", "durations"])
        let full = try Data(contentsOf: installed.model)
        let cases: [(String, URL, String)] = [
            ("truncated", try make("truncated", model: full.prefix(full.count / 2)), "model.onnx"),
            ("no metadata", try make("bare", model: ProtobufWriter.model(inputs: graph.inputs, outputs: graph.outputs, metadata: [:])), "metadata"),
            (
                "wrong rate",
                try make(
                    "rate",
                    model: ProtobufWriter.model(
                        inputs: graph.inputs, outputs: graph.outputs,
                        metadata: good.merging(["sample_rate": "16000"]) { $1 })), "does not match"
            ),
            (
                "not piper", try make("graph", model: ProtobufWriter.model(inputs: ["x"], outputs: ["y"], metadata: good)),
                "not a prepared Piper graph"
            ),
            (
                "sherpa's", try make("sherpa", model: ProtobufWriter.model(inputs: graph.inputs, outputs: ["output"], metadata: good)),
                "not a prepared Piper graph"
            ),
            (
                "bad tokens",
                try make(
                    "tokens", model: ProtobufWriter.model(inputs: graph.inputs, outputs: graph.outputs, metadata: good),
                    tokens: "_ 0\n^ 1\n$ 2\n  3\nab 4\n"), "line 5"
            ),
            (
                "duplicate ids",
                try make(
                    "duplicate", model: ProtobufWriter.model(inputs: graph.inputs, outputs: graph.outputs, metadata: good),
                    tokens: "_ 0\n^ 1\n$ 2\n  3\na 3\n"), "line 5"
            ),
            ("old revision", try make("old", model: nil, revision: 0), "revision 0"),
            ("no model", try make("missing", model: nil), "model.onnx"),
        ]
        for (what, folder, reason) in cases {
            let error = #expect(throws: VoiceError.self, "\(what)") { try PiperVoice(folder: folder) }
            #expect(error?.kind == .configuration && error?.message.contains(reason) == true, "\(what): \(String(describing: error))")
        }
        let provider = PiperProvider(folder: scratch.url)
        let error = await #expect(throws: VoiceError.self) {
            try await provider.synthesize(SynthesisRequest(voice: "truncated", text: "Hello.", outputFormat: "pcm"))
        }
        #expect(error?.kind == .configuration && error?.message.contains("truncated") == true)
        let missing = await #expect(throws: VoiceError.self) {
            try await provider.synthesize(SynthesisRequest(voice: "nobody", text: "Hello.", outputFormat: "pcm"))
        }
        #expect(missing?.kind == .voiceNotFound && missing?.message.contains("scripts/setup.sh") == true)
        #expect(try await provider.voices().first { $0.name == "bare" }?.details.hasPrefix("not usable") == true)
    }

    @Test("speakers without a voice get the natural voice first, then Flite's and espeak-ng's")
    func defaultVoices() throws {
        let offline: [any VoiceProvider] = [FliteProvider(), EspeakProvider()]
        let defaults = DefaultVoices.natural.voices(in: VoiceRegistry(providers: [PiperProvider()] + offline))
        #expect(defaults.first?.description == "piper:\(PiperSpeech.voice)")
        #expect(defaults.dropFirst().first?.provider == "flite" && defaults.last?.provider == "espeak")
        let empty = try TemporaryDirectory(prefix: "chorus-piper-none")
        #expect(
            DefaultVoices.natural.voices(in: VoiceRegistry(providers: [PiperProvider(folder: empty.url)] + offline))
                == DefaultVoices.flite.voices(in: VoiceRegistry(providers: offline)))
    }

    @Test("the preparation script refuses a config or model that is not a Piper voice, writing nothing")
    func preparationRefuses() async throws {
        let python = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/chorus/setup/converter-venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "scripts/setup.sh prepares the converter's Python")
        let scratch = try TemporaryDirectory(prefix: "chorus-piper-prepare")
        let model = scratch.url.appendingPathComponent("voice.onnx")
        let output = scratch.url.appendingPathComponent("voice")
        let script = Repository.file("scripts/prepare_piper.py").path
        try Data("not json".utf8).write(to: scratch.url.appendingPathComponent("voice.onnx.json"))
        try Data(repeating: 7, count: 100).write(to: model)
        let notJSON = try await ToolRun.run([python.path, script, model.path, output.path])
        #expect(notJSON.status == 1 && notJSON.errors.contains("not JSON"), "\(notJSON.errors)")
        let config: [String: Any] = [
            "audio": ["sample_rate": 22050], "espeak": ["voice": "en-us"],
            "phoneme_id_map": ["_": [0], "^": [1], "$": [2], " ": [3]],
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: scratch.url.appendingPathComponent("voice.onnx.json"))
        let notONNX = try await ToolRun.run([python.path, script, model.path, output.path])
        #expect(notONNX.status == 1 && notONNX.errors.contains("not an ONNX model"), "\(notONNX.errors)")
        var noPad = config
        noPad["phoneme_id_map"] = ["^": [1], "$": [2], " ": [3]]
        try JSONSerialization.data(withJSONObject: noPad).write(to: scratch.url.appendingPathComponent("voice.onnx.json"))
        let missing = try await ToolRun.run([python.path, script, model.path, output.path])
        #expect(missing.status == 1 && missing.errors.contains("'_'"), "\(missing.errors)")
        // A graph with Piper's inputs but no duration ceiling to time the phonemes by.
        try JSONSerialization.data(withJSONObject: config).write(to: scratch.url.appendingPathComponent("voice.onnx.json"))
        try ProtobufWriter.model(inputs: ["input", "input_lengths", "scales"], outputs: ["output"], metadata: [:]).write(to: model)
        let untimed = try await ToolRun.run([python.path, script, model.path, output.path])
        #expect(untimed.status == 1 && untimed.errors.contains("phoneme durations"), "\(untimed.errors)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).allSatisfy { !$0.hasPrefix(".piper-") })
    }
}

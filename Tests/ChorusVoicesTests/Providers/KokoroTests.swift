import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusInference
@testable import ChorusSpeech
@testable import ChorusText
@testable import ChorusWire

/// Kokoro-82M, the model set-up joins from its wheels and prepares (`scripts/prepare_kokoro.py`), with the Japanese
/// pack's five voices, run in process on ONNX Runtime. Real phonemes in, real audio out, heard back by the Whisper
/// model; broken voice files and models refused by name while the other voices keep working.
@Suite("Kokoro voices (ONNX Runtime)")
struct KokoroTests {
    static let text = "The quick brown fox jumps over the lazy dog. Practice moved to half past four, so bring water!"
    static let packVoices = ["jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"]

    static func speak(
        _ text: String = text, voice: String = "jf_alpha", settings: [String: JSONValue] = [:],
        provider: KokoroProvider = KokoroProvider()
    ) async throws -> (AudioBuffer, [WordTiming]) {
        let speech = try await provider.synthesize(SynthesisRequest(voice: voice, text: text, settings: settings, outputFormat: "pcm"))
        guard case .pcm(let buffer) = speech.audio else { throw VoiceError(.invalidResponse, provider: "kokoro", message: "not pcm") }
        return (buffer, speech.words ?? [])
    }

    @Test("set-up's model and voices open: five voices listed with language and gender from their names")
    func installed() async throws {
        let model = try KokoroModel(folder: KokoroModel.folder())
        #expect(model.sourceDigest == "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb")
        #expect(model.vocabulary.count == 114 && model.vocabulary["ɹ"] != nil)
        let listed = try await KokoroProvider().voices()
        #expect(listed.map(\.id.description) == Self.packVoices.map { "kokoro:\($0)" }, "\(listed)")
        let kumo = try #require(listed.first { $0.name == "jm_kumo" })
        #expect(kumo.details.contains("Japanese, male") && kumo.details.contains("24000 Hz") && kumo.details.contains("licence"))
        #expect(KokoroVoices.kind(of: "bf_emma") == .init(language: "British English", espeakVoice: "en-gb", sounds: "female"))
        #expect(KokoroVoices.kind(of: "custom").language == nil)
    }

    @Test("a sentence is heard back word for word by the Whisper model, and its words start where Whisper hears them")
    func heardBack() async throws {
        let (buffer, words) = try await Self.speak(voice: "jm_kumo")
        #expect(buffer.format == AudioFormat(sampleRate: 24_000, channels: 1))
        #expect((3.0...10.0).contains(buffer.duration), "\(buffer.duration) s")
        #expect(buffer.peak > 0.05 && buffer.peak <= 1.5)
        #expect(words.map(\.word) == WordAligner.words(in: Self.text).map(\.word))
        #expect(zip(words, words.dropFirst()).allSatisfy { $0.end <= $1.start + 1e-9 && $0.start < $0.end }, "\(words)")
        #expect(words.last.map { $0.end <= buffer.duration + 1e-6 } == true)
        let (heard, differences) = try await PiperTests.heard(buffer, words: words)
        // At most two words of eighteen missed: the pack's voices are Japanese, and even its clearest (jm_kumo) drops a
        // final "d" that Whisper then hears as another word ("moved to" heard as "move the").
        #expect(WhisperTests.wordErrorRate(heard.text, Self.text) <= 0.12, "\(heard.text)")
        #expect(differences.count >= words.count - 3, "\(heard.words)")
        #expect(differences.filter { $0 < 0.1 }.count >= differences.count * 8 / 10, "\(differences)")
    }

    @Test("the same text and voice give the same samples; speed and blends change them; a blend is listed as written")
    func deterministicSpeedAndBlends() async throws {
        let text = "I can get her. I'll bring a snack too."
        let (first, _) = try await Self.speak(text)
        let (again, _) = try await Self.speak(text)
        #expect(first.samples == again.samples)
        let (faster, _) = try await Self.speak(text, voice: "jf_alpha?speed=1.5")
        #expect(faster.duration < first.duration * 0.8, "\(faster.duration) vs \(first.duration)")
        let (fasterBySetting, _) = try await Self.speak(text, settings: ["speed": .number(1.5)])
        #expect(fasterBySetting.samples == faster.samples)
        let (kumo, _) = try await Self.speak(text, voice: "jm_kumo")
        let (even, _) = try await Self.speak(text, voice: "jf_alpha+jm_kumo")
        let (weighted, _) = try await Self.speak(text, voice: "jf_alpha(1)+jm_kumo(1)")
        #expect(even.samples == weighted.samples, "equal weights are an even blend")
        #expect(even.samples != first.samples && even.samples != kumo.samples)
        let blend = try KokoroVoices.Blend("af_bella(2)+af_sky(1)")
        #expect(blend.parts.map(\.name) == ["af_bella", "af_sky"] && abs(blend.parts[0].weight - 2.0 / 3) < 1e-12)
        for (bad, reason) in [("a+", "not a voice name"), ("a(0)+b", "above 0"), ("a(x)", "not a number"), ("../x", "not a voice name")] {
            #expect(throws: VoiceError.self, "\(bad)") { try KokoroVoices.Blend(bad) }
            #expect(
                ((try? KokoroVoices.Blend(bad)) == nil) && (Result { try KokoroVoices.Blend(bad) }.failureText?.contains(reason) == true), "\(bad)")
        }
        await #expect(throws: VoiceError.self) { try await Self.speak(text, voice: "jf_alpha+nobody") }
        await #expect(throws: VoiceError.self) { try await Self.speak(text, voice: "jf_alpha?speed=9") }
        await #expect(throws: VoiceError.self) { try await Self.speak(text, voice: "jf_alpha?pitch=3") }
    }

    @Test(
        "urgent speech (a stream's first words: the session on the shared pool, made in the background when first asked for) gives the same samples")
    func urgentSameSamples() async throws {
        let synthesizer = try await KokoroEngine.shared.synthesizer(in: KokoroModel.folder())
        let style = try KokoroVoices.of(folder: synthesizer.model.voicesFolder).style(of: KokoroVoices.Blend("jf_alpha"))
        let ipa = try await EspeakEngine.shared.phonemes("Running late, practice moved to four thirty.", voice: "en-us").joined(separator: " ")
        let phonemes = KokoroSynthesizer.trainedSymbols(ipa, language: "en-us")
        let ordinary = try synthesizer.speak(phonemes, style: style, speed: 1, urgent: false)
        // The first urgent call starts making the session and is spoken on the other; later ones on it.
        #expect(try synthesizer.speak(phonemes, style: style, speed: 1, urgent: true).samples == ordinary.samples)
        for _ in 0..<1_200 where !synthesizer.urgentSessionReady { try await Task.sleep(nanoseconds: 50_000_000) }
        #expect(synthesizer.urgentSessionReady)
        let urgent = try synthesizer.speak(phonemes, style: style, speed: 1, urgent: true)
        #expect(urgent.samples == ordinary.samples && urgent.phonemes.map(\.samples) == ordinary.phonemes.map(\.samples))
    }

    @Test("another language's text goes through that language's phonemes (espeak-ng's Spanish, not English)")
    func otherLanguage() async throws {
        let text = "Hola, ¿cómo estás? Nos vemos mañana a las cuatro."
        let synthesizer = try await KokoroEngine.shared.synthesizer(in: KokoroModel.folder())
        let spanish = try await EspeakEngine.shared.phonemes(text, voice: "es").joined(separator: " ")
        let english = try await EspeakEngine.shared.phonemes(text, voice: "en-us").joined(separator: " ")
        #expect(spanish != english)
        let (inSpanish, words) = try await Self.speak(text, voice: "jf_alpha?language=es")
        let (inEnglish, _) = try await Self.speak(text, voice: "jf_alpha")
        #expect(inSpanish.samples != inEnglish.samples)
        #expect(words.map(\.word) == WordAligner.words(in: text).map(\.word))
        #expect(synthesizer.tokens(of: spanish).dropped.isEmpty, "espeak-ng's Spanish phonemes are all in the vocabulary")
    }

    @Test("a conversation's language is the phonemes' language for Kokoro's voices, unless the settings say another")
    func conversationLanguage() async throws {
        let directory = try TemporaryDirectory()
        let chorus = try Chorus(
            configuration: Chorus.Configuration(registry: VoiceRegistry(providers: [KokoroProvider()]), cacheDirectory: directory.file("cache")))
        func chat(_ fields: String) throws -> Conversation {
            try Conversation.parse(
                Data(
                    #"{\#(fields) "normalize_text": false, "messages": [{"speaker": "Ana", "text": "Nos vemos mañana.", "voice": "kokoro:jf_alpha"}]}"#
                        .utf8),
                baseDirectory: directory.url, name: "chat.json")
        }
        let spanish = try await render(try chat(#""language": "es","#), with: chorus)
        #expect(spanish.progress.cacheHits == 0)
        // The same settings said another way: the same clip, from the cache.
        let told = try await render(try chat(#""voice_settings": {"kokoro": {"language": "es"}},"#), with: chorus)
        #expect(told.progress.cacheHits == 1)
        // Settings that say another language win over the conversation's.
        let english = try await render(try chat(#""language": "es", "voice_settings": {"kokoro": {"language": "en-us"}},"#), with: chorus)
        let plain = try await render(try chat(""), with: chorus)
        #expect(english.progress.cacheHits == 0 && plain.progress.cacheHits == 0)
        let audio = try [spanish, english, plain].map { try AudioFileReader(data: try #require($0.result.audio), name: "wav").readAll().samples }
        #expect(audio[0] != audio[2] && audio[1] == audio[2], "Spanish phonemes differ from English; en-us is what the voice reads by default")
    }

    @Test("phonemes the vocabulary lacks are left out and said in the render's warnings, fresh and from the cache")
    func droppedSymbols() async throws {
        // Welsh's "ll" is ɬ, which Kokoro's vocabulary has not: three of them here.
        let voice = "jf_alpha?language=cy"
        let speech = try await KokoroProvider().synthesize(SynthesisRequest(voice: voice, text: "Llanelli a Llandudno.", outputFormat: "pcm"))
        #expect(speech.notes == ["kokoro:jf_alpha has no symbol for 3 of the text's phonemes (ɬ); they were left out"], "\(speech.notes)")
        #expect(try await KokoroProvider().synthesize(SynthesisRequest(voice: "jf_alpha", text: "All here.", outputFormat: "pcm")).notes.isEmpty)
        let directory = try TemporaryDirectory()
        let chorus = try Chorus(
            configuration: Chorus.Configuration(registry: VoiceRegistry(providers: [KokoroProvider()]), cacheDirectory: directory.file("cache")))
        let chat = Conversation(messages: [.init(speaker: "Gareth", text: "Llanelli a Llandudno.", voice: VoiceID("kokoro:\(voice)"))])
        for pass in ["fresh", "cached"] {
            let rendered = try await render(chat, with: chorus)
            #expect(rendered.result.warnings == ["messages[0] (Gareth): " + speech.notes[0]], "\(pass): \(rendered.result.warnings)")
            #expect(rendered.progress.cacheHits == (pass == "cached" ? 1 : 0))
        }
    }

    @Test("NumPy's archives (stored and deflated, as numpy.savez and savez_compressed write them) and arrays are read exactly")
    func numPyFiles() throws {
        let stored = try NumPyArchive.arrays(ofArchive: Data(contentsOf: Repository.file("Fuzz/corpus/model/kokoro-small.npz")))
        #expect(stored == ["af_test": .init(shape: [2, 256], values: [Float](repeating: 0, count: 512))])
        let deflated = try NumPyArchive.arrays(ofArchive: Data(contentsOf: Repository.file("Fuzz/corpus/model/kokoro-small-deflated.npz")))
        #expect(deflated == ["bf_test": .init(shape: [3, 256], values: [Float](repeating: 1, count: 768))])
        let array = try NumPyArchive.array(ofFile: Data(contentsOf: Repository.file("Fuzz/corpus/model/kokoro-voice-small.npy")))
        #expect(array.shape == [4, 256] && array.values.count == 1024)
        // Damaged: a flipped byte in the deflated data fails its CRC or its inflation, never reads as other numbers.
        var damaged = try Data(contentsOf: Repository.file("Fuzz/corpus/model/kokoro-small-deflated.npz"))
        let member = try #require(NumPyArchive.members(of: damaged).first)
        let header = member.localHeader
        let start =
            header + 30 + Int(damaged[header + 26]) + (Int(damaged[header + 27]) << 8) + Int(damaged[header + 28]) + (Int(damaged[header + 29]) << 8)
        damaged[start + member.compressedSize / 2] ^= 0x55
        #expect(throws: NumPyArchive.Failure.self) { try NumPyArchive.arrays(ofArchive: damaged) }
        #expect(throws: VoiceError.self) { try KokoroVoices.read(damaged, file: URL(fileURLWithPath: "/v/x.npz")) }
    }

    @Test("set-up's defaults: Kokoro's voices, Piper's, blends, then Flite's; the sample family gets four natural voices")
    func defaults() throws {
        let registry = VoiceRegistry(providers: [PiperProvider(), KokoroProvider(), FliteProvider(), EspeakProvider()])
        let defaults = DefaultVoices.natural.voices(in: registry).map(\.description)
        #expect(
            Array(defaults.prefix(8)) == [
                "kokoro:jf_gongitsune", "kokoro:jf_nezumi", "kokoro:jm_kumo", "kokoro:jf_tebukuro", "kokoro:jf_alpha",
                "piper:en_US-joe-medium", "kokoro:jf_gongitsune+jf_nezumi", "kokoro:jf_tebukuro+jf_alpha",
            ], "\(defaults)")
        #expect(defaults.dropFirst(8).first == "flite:slt?rate=1.08" && defaults.last?.hasPrefix("espeak:") == true)
        // A providers-file server named kokoro (Kokoro-FastAPI) replaces the built-in one: its voices are not listed here.
        let served = VoiceRegistry(providers: [
            PiperProvider(), FliteProvider(), EspeakProvider(),
            OpenAIProvider(id: "kokoro", baseURL: "http://127.0.0.1:1/v1", apiKey: nil, keyVariable: nil),
        ])
        #expect(!DefaultVoices.natural.voices(in: served).contains { $0.provider == "kokoro" })
        let directory = try TemporaryDirectory()
        let chorus = try Chorus(configuration: Chorus.Configuration(registry: registry, cacheDirectory: directory.url))
        let family = try Conversation.load(from: Repository.file("samples/family-chat.json"))
        var bySpeaker: [String: String] = [:]
        for (message, voice) in zip(family.messages, chorus.voices(for: family)) { bySpeaker[message.speaker] = voice?.description }
        #expect(
            bySpeaker == ["Dad": "kokoro:jm_kumo", "Mom": "kokoro:jf_gongitsune", "Grandma": "kokoro:jf_nezumi", "Maya": "kokoro:jf_tebukuro"],
            "\(bySpeaker)")
    }

    @Test("a broken voice file is named and left out while the others keep working; a broken model is named")
    func brokenFiles() async throws {
        let directory = try TemporaryDirectory()
        let installed = KokoroModel.folder()
        let folder = directory.file("kokoro")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("voices"), withIntermediateDirectories: true)
        for name in ["model.onnx", "model.json", "vocab.json"] {
            try FileManager.default.createSymbolicLink(
                at: folder.appendingPathComponent(name), withDestinationURL: installed.appendingPathComponent(name))
        }
        let pack = try Data(contentsOf: installed.appendingPathComponent("voices/voices_ja.npz"))
        try pack.prefix(pack.count / 2).write(to: folder.appendingPathComponent("voices/truncated.npz"))
        // A single voice as its own .npy (the pack's first member's bytes), and one of the wrong shape.
        let members = try NumPyArchive.members(of: pack)
        let alpha = try NumPyArchive.contents(of: try #require(members.first { $0.name == "jf_alpha.npy" }), in: pack)
        try alpha.write(to: folder.appendingPathComponent("voices/my_voice.npy"))
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 256), }".padding(toLength: 117, withPad: " ", startingAt: 0) + "\n"
        let wrong = Data([0x93]) + Data("NUMPY".utf8) + Data([1, 0, UInt8(header.utf8.count), 0]) + Data(header.utf8) + Data(count: 2 * 256 * 4)
        try wrong.write(to: folder.appendingPathComponent("voices/af_wrong.npy"))
        let provider = KokoroProvider(folder: folder)
        let listed = try await provider.voices()
        #expect(listed.filter { !$0.details.hasPrefix("not usable") }.map(\.name) == ["my_voice"], "\(listed)")
        let problems = listed.filter { $0.details.hasPrefix("not usable") }.map(\.details)
        #expect(problems.contains { $0.contains("truncated.npz") && $0.contains("truncated") }, "\(problems)")
        #expect(problems.contains { $0.contains("af_wrong.npy") && $0.contains("2×256") }, "\(problems)")
        let (mine, _) = try await Self.speak("Still here.", voice: "my_voice", provider: provider)
        let (alphaSpoken, _) = try await Self.speak("Still here.", voice: "jf_alpha")
        #expect(mine.samples == alphaSpoken.samples, "a voice file of its own speaks as the same voice in the pack")

        // A model cut short: named, with what the runtime said.
        let broken = directory.file("broken")
        try FileManager.default.createDirectory(at: broken.appendingPathComponent("voices"), withIntermediateDirectories: true)
        for name in ["model.json", "vocab.json"] {
            try FileManager.default.copyItem(at: installed.appendingPathComponent(name), to: broken.appendingPathComponent(name))
        }
        let model = try Data(contentsOf: installed.appendingPathComponent("model.onnx"), options: .alwaysMapped)
        try model.prefix(1 << 20).write(to: broken.appendingPathComponent("model.onnx"))
        try alpha.write(to: broken.appendingPathComponent("voices/jf_alpha.npy"))
        await #expect(throws: VoiceError.self) { try await Self.speak("Hello.", provider: KokoroProvider(folder: broken)) }
        do {
            _ = try await Self.speak("Hello.", provider: KokoroProvider(folder: broken))
        } catch let error as VoiceError {
            #expect(error.message.contains(broken.appendingPathComponent("model.onnx").path), "\(error.message)")
        }
        // A vocabulary that is not one.
        try Data(#"{"vocab": {"ab": 3}}"#.utf8).write(to: broken.appendingPathComponent("vocab.json"))
        #expect(throws: VoiceError.self) { try KokoroModel(folder: broken) }
    }
}

extension Result where Failure == any Error {
    /// The error's description, if it failed.
    fileprivate var failureText: String? {
        if case .failure(let error) = self { return (error as? VoiceError)?.message ?? "\(error)" }
        return nil
    }
}

import ChorusFixtures
import ChorusSpeechTestSupport
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusInference
@testable import ChorusSpeech
@testable import ChorusText

/// Kokoro-82M, the model set-up joins from its wheels and prepares (`scripts/prepare_kokoro.py`), with the Japanese
/// pack's five voices, run in process on ONNX Runtime. Real phonemes in, real audio out, heard back by the Whisper
/// model; broken voice files and models refused by name while the other voices keep working.
///
/// The voices alone (their speech: `KokoroSpeech`); what the Whisper model hears of them is tested in
/// ChorusListeningTests, conversations in their voices in ChorusConversationTests.
@Suite("Kokoro voices (ONNX Runtime)")
struct KokoroTests {
    static let packVoices = ["jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo"]

    @Test("set-up's model and voices open: five voices listed with language and gender from their names")
    func installed() async throws {
        let model = try KokoroModel(folder: KokoroModel.folder())
        #expect(model.sourceDigest == "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb")
        #expect(model.vocabulary.count == 114 && model.vocabulary["ɹ"] != nil)
        // Voices this machine made from recordings (`chorus voices create`) are the user's, not set-up's.
        let made = MadeVoices.records(in: model.voicesFolder)
        let listed = try await KokoroProvider().voices().filter { made[$0.name] == nil }
        #expect(listed.map(\.id.description) == Self.packVoices.map { "kokoro:\($0)" }, "\(listed)")
        let kumo = try #require(listed.first { $0.name == "jm_kumo" })
        #expect(kumo.details.contains("Japanese, male") && kumo.details.contains("24000 Hz") && kumo.details.contains("licence"))
        #expect(KokoroVoices.kind(of: "bf_emma") == .init(language: "British English", espeakVoice: "en-gb", sounds: "female"))
        #expect(KokoroVoices.kind(of: "custom").language == nil)
    }

    @Test("the same text and voice give the same samples; speed and blends change them; a blend is listed as written")
    func deterministicSpeedAndBlends() async throws {
        let text = "I can get her. I'll bring a snack too."
        let (first, _) = try await KokoroSpeech.speak(text)
        let (again, _) = try await KokoroSpeech.speak(text)
        #expect(first.samples == again.samples)
        let (faster, _) = try await KokoroSpeech.speak(text, voice: "jf_alpha?speed=1.5")
        #expect(faster.duration < first.duration * 0.8, "\(faster.duration) vs \(first.duration)")
        let (fasterBySetting, _) = try await KokoroSpeech.speak(text, settings: ["speed": .number(1.5)])
        #expect(fasterBySetting.samples == faster.samples)
        let (kumo, _) = try await KokoroSpeech.speak(text, voice: "jm_kumo")
        let (even, _) = try await KokoroSpeech.speak(text, voice: "jf_alpha+jm_kumo")
        let (weighted, _) = try await KokoroSpeech.speak(text, voice: "jf_alpha(1)+jm_kumo(1)")
        #expect(even.samples == weighted.samples, "equal weights are an even blend")
        #expect(even.samples != first.samples && even.samples != kumo.samples)
        let blend = try KokoroVoices.Blend("af_bella(2)+af_sky(1)")
        #expect(blend.parts.map(\.name) == ["af_bella", "af_sky"] && abs(blend.parts[0].weight - 2.0 / 3) < 1e-12)
        for (bad, reason) in [("a+", "not a voice name"), ("a(0)+b", "above 0"), ("a(x)", "not a number"), ("../x", "not a voice name")] {
            #expect(throws: VoiceError.self, "\(bad)") { try KokoroVoices.Blend(bad) }
            #expect(
                ((try? KokoroVoices.Blend(bad)) == nil) && (Result { try KokoroVoices.Blend(bad) }.failureText?.contains(reason) == true), "\(bad)")
        }
        await #expect(throws: VoiceError.self) { try await KokoroSpeech.speak(text, voice: "jf_alpha+nobody") }
        await #expect(throws: VoiceError.self) { try await KokoroSpeech.speak(text, voice: "jf_alpha?speed=9") }
        await #expect(throws: VoiceError.self) { try await KokoroSpeech.speak(text, voice: "jf_alpha?pitch=3") }
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
        let (inSpanish, words) = try await KokoroSpeech.speak(text, voice: "jf_alpha?language=es")
        let (inEnglish, _) = try await KokoroSpeech.speak(text, voice: "jf_alpha")
        #expect(inSpanish.samples != inEnglish.samples)
        #expect(words.map(\.word) == WordAligner.words(in: text).map(\.word))
        #expect(synthesizer.tokens(of: spanish).dropped.isEmpty, "espeak-ng's Spanish phonemes are all in the vocabulary")
    }

    @Test(
        "Chorus's own English voices: two female, two male, each made from several people; offered wherever their base voices are, exactly their recipe, listed as made, first among the defaults; a voice file of the same name wins"
    )
    func englishVoices() async throws {
        let builtIn = MadeVoices.builtIn
        #expect(builtIn.map(\.name).sorted() == ["af_linden", "af_wren", "am_alder", "am_rowan"], "\(builtIn.map(\.name))")
        for record in builtIn {
            #expect(record.people >= 2 && record.sources.count >= 2 && record.madeBy == "chorus", "\(record.name)")
            #expect(record.sounds == (record.name.hasPrefix("af_") ? "female" : "male") && record.offset?.count == KokoroModel.styleWidth)
            #expect(record.wordErrorRate.map { $0 <= 0.05 } == true, "\(record.name): \(String(describing: record.wordErrorRate))")
        }
        let model = try KokoroModel(folder: KokoroModel.folder())
        let voices = KokoroVoices.of(folder: model.voicesFolder)
        for record in builtIn {
            // The recipe by hand: the base's voices in equal parts, the offset added to every row.
            var expected = [Float](repeating: 0, count: KokoroModel.styleRows * KokoroModel.styleWidth)
            for part in try KokoroVoices.Blend(record.base).parts {
                let style = try #require(voices.styles[part.name], "\(record.name)'s base \(record.base)")
                for index in expected.indices { expected[index] += Float(part.weight) * style.values[index] }
            }
            let offset = try #require(record.offset)
            for index in expected.indices { expected[index] += offset[index % offset.count] }
            #expect(voices.styles[record.name]?.values == expected, "\(record.name)")
        }
        let made = MadeVoices.records(in: model.voicesFolder)
        #expect(builtIn.allSatisfy { made[$0.name] == $0 })
        let kept = #expect(throws: VoiceError.self) { try MadeVoices.remove(name: "af_linden", in: model.voicesFolder) }
        #expect(kept?.message.contains("Chorus's own voices") == true && voices.styles["af_linden"] != nil)
        let listed = try await KokoroProvider().voices()
        for record in builtIn {
            let info = try #require(listed.first { $0.name == record.name }, "\(listed.map(\.name))")
            #expect(
                info.details.hasPrefix("American English; made by Chorus from") && info.details.contains("; \(record.sounds);"), "\(info.details)")
        }
        #expect(Array(KokoroProvider().defaultVoices().first.prefix(4)) == ["af_linden", "af_wren", "am_alder", "am_rowan"])
        let (linden, _) = try await KokoroSpeech.speak("Good morning.", voice: "af_linden")
        let (again, _) = try await KokoroSpeech.speak("Good morning.", voice: "af_linden")
        #expect(linden.samples == again.samples && linden.peak > 0.05)

        // A folder without their base voices has none of them; a voice file of one's name is that file's voice (and not
        // a made voice: it has no record).
        let directory = try TemporaryDirectory()
        let own = directory.file("own")
        let other = directory.file("other")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let pack = try Data(contentsOf: model.voicesFolder.appendingPathComponent("voices_ja.npz"))
        let alpha = try NumPyArchive.contents(of: try #require(NumPyArchive.members(of: pack).first { $0.name == "jf_alpha.npy" }), in: pack)
        try pack.write(to: own.appendingPathComponent("voices_ja.npz"))
        try alpha.write(to: own.appendingPathComponent("af_linden.npy"))
        try alpha.write(to: other.appendingPathComponent("jf_alpha.npy"))
        let ownVoices = KokoroVoices(folder: own)
        #expect(ownVoices.styles["af_linden"] == voices.styles["jf_alpha"] && ownVoices.styles["af_wren"] == voices.styles["af_wren"])
        #expect(MadeVoices.records(in: own)["af_linden"] == nil && MadeVoices.records(in: own)["af_wren"] != nil)
        #expect(KokoroVoices(folder: other).styles.keys.sorted() == ["jf_alpha"] && MadeVoices.records(in: other).isEmpty)
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
        // A voice asked for that is not there while a file could not be read: the error names that file and what is
        // wrong (the voice may be in it), not only "no such voice".
        let missing = await #expect(throws: VoiceError.self) { try await KokoroSpeech.speak("Hi.", voice: "jf_gongitsune", provider: provider) }
        #expect(
            missing?.kind == .configuration && missing?.message.contains("no Kokoro voice \"jf_gongitsune\"") == true
                && missing?.message.contains("truncated.npz") == true, "\(String(describing: missing))")
        let (mine, _) = try await KokoroSpeech.speak("Still here.", voice: "my_voice", provider: provider)
        let (alphaSpoken, _) = try await KokoroSpeech.speak("Still here.", voice: "jf_alpha")
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
        await #expect(throws: VoiceError.self) { try await KokoroSpeech.speak("Hello.", provider: KokoroProvider(folder: broken)) }
        do {
            _ = try await KokoroSpeech.speak("Hello.", provider: KokoroProvider(folder: broken))
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

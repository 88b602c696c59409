import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech

/// Kokoro-82M, the model set-up joins from its wheels and prepares (`scripts/prepare_kokoro.py`), with the Japanese
/// pack's five voices, run in process on ONNX Runtime. Real phonemes in, real audio out, heard back by the Whisper
/// model; broken voice files and models refused by name while the other voices keep working.
///
/// Conversations in Kokoro's voices; the voices alone are tested in ChorusSpeechTests.
@Suite("Kokoro voices (ONNX Runtime)")
struct KokoroTests {
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

    @Test(
        "set-up's defaults: the natural voices whose own language is English first (Chorus's own, then Piper's joe), then the Japanese pack's, blends, then Flite's; the sample family gets four natural voices, Mom, Dad and Grandma English ones"
    )
    func defaults() throws {
        let registry = VoiceRegistry(providers: [PiperProvider(), KokoroProvider(), FliteProvider(), EspeakProvider()])
        let defaults = DefaultVoices.natural.voices(in: registry).map(\.description)
        #expect(
            Array(defaults.prefix(13)) == [
                "kokoro:af_linden", "kokoro:af_wren", "kokoro:am_alder", "kokoro:am_rowan", "piper:en_US-joe-medium",
                "kokoro:jf_gongitsune", "kokoro:jf_nezumi", "kokoro:jm_kumo", "kokoro:jf_tebukuro", "kokoro:jf_alpha",
                "kokoro:af_linden+af_wren", "kokoro:jf_gongitsune+jf_nezumi", "kokoro:am_alder+am_rowan",
            ], "\(defaults)")
        #expect(defaults.dropFirst(13).first == "flite:slt?rate=1.08" && defaults.last?.hasPrefix("espeak:") == true)
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
            bySpeaker == [
                "Mom": "kokoro:af_linden", "Dad": "kokoro:am_alder", "Grandma": "kokoro:af_wren", "Maya": "kokoro:jf_gongitsune",
            ],
            "\(bySpeaker)")
    }
}

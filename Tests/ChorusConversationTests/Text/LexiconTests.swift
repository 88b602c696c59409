import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech
@testable import ChorusText

/// Lexicons in conversations and renders; the text alone is tested in ChorusTextTests, the providers' phoneme markup
/// in ChorusSpeechTests.
@Suite("Lexicons: aliases spoken for written words")
struct LexiconTests {
    @Test(
        "bad entries are refused naming the entry",
        arguments: [
            (#"{"lexicon": {"two words": "x"}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.two words", "one word"),
            (#"{"lexicon": {"Nguyen": ""}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.Nguyen", "words to say"),
            (#"{"lexicon": {"Nguyen": 3}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.Nguyen", "must be an alias"),
            (
                #"{"lexicon": {"Siobhan": {"ipa": "ʃɪ vɔːn"}}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.Siobhan.ipa",
                "a space at character 3 is not IPA"
            ),
            (
                #"{"lexicon": {"Siobhan": {"ipa": "SIv'O:n"}}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.Siobhan.ipa",
                "\"S\" (U+53) at character 1 is not IPA"
            ),
            (#"{"lexicon": {"Siobhan": {"ipa": ""}}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.Siobhan.ipa", "empty"),
            (#"{"lexicon": {"Siobhan": {"ipa": 3}}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.Siobhan.ipa", "must be a string"),
            (#"{"lexicon": {"Siobhan": {"case_sensitive": true}}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.Siobhan", "alias"),
            (
                #"{"lexicon": {"Nguyen": {"alias": "win", "case": true}}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.Nguyen.case",
                "unknown field"
            ),
            (#"{"lexicon": {"Nguyen": "win [pause:1s] again"}, "messages": [{"speaker": "A", "text": "Hi."}]}"#, "lexicon.Nguyen", "words to say"),
        ])
    func badEntries(json: String, field: String, reason: String) throws {
        let error = #expect(throws: ConversationError.self) {
            try Conversation.parse(Data(json.utf8), baseDirectory: URL(fileURLWithPath: "/tmp"), name: "c.json")
        }
        #expect(error?.description.contains(field) == true && error?.description.contains(reason) == true, "\(String(describing: error))")
    }

    @Test(
        "the provider is sent the alias, the timeline shows the written word where the alias was said; an entry change asks again only for what it touches"
    )
    func throughProvider() async throws {
        let server = try StubServer { request in StubAudio.elevenLabs(request) }
        let directory = try TemporaryDirectory()
        func chat(_ alias: String) throws -> Conversation {
            try conversation(
                #"""
                {"voices": {"A": "elevenlabs:voice1", "B": "elevenlabs:voice2"}, "lexicon": {"Nguyen": "\#(alias)"},
                 "messages": [{"speaker": "A", "text": "Ask Mrs Nguyen."}, {"speaker": "B", "text": "Dinner is at seven."}]}
                """#, in: directory)
        }
        let first = try await render(chat("win"), with: makeChorus(server: server, cache: directory.file("cache")))
        #expect(Set(server.requests.compactMap { $0.json?["text"] as? String }) == ["Ask Mrs win.", "Dinner is at seven."])
        let segment = first.result.timeline.segments[0]
        #expect(segment.text == "Ask Mrs Nguyen.")
        #expect(segment.words?.map(\.word) == ["Ask", "Mrs", "Nguyen"])
        // Another alias: only the message with the word is asked for again.
        let second = try await render(chat("gwen"), with: makeChorus(server: server, cache: directory.file("cache")))
        #expect(server.requests.count == 3 && server.requests.last?.json?["text"] as? String == "Ask Mrs gwen.")
        #expect(second.result.timeline.segments[0].words?.last?.word == "Nguyen")
    }

    @Test(
        "IPA on the offline voices (a lexicon entry, SSML's phoneme; Piper and espeak-ng through phoneme input, Flite through its lexicon): the Whisper model hears it, the timeline shows the written word",
        arguments: ["piper:\(PiperVoice.defaultName)", "espeak:en-us", "flite:slt"])
    func ipaHeard(voice: String) async throws {
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"lexicon": {"Flurgday": {"ipa": "ˈtuːzdeɪ"}}, "messages": [
              {"speaker": "A", "text": "See you on Flurgday.", "voice": "\#(voice)"},
              {"speaker": "A", "text": "<speak>Or on <phoneme alphabet=\"ipa\" ph=\"ˈfɹaɪdeɪ\">Blorkday</phoneme>.</speak>", "voice": "\#(voice)"}]}
            """#, in: directory)
        var configuration = Chorus.Configuration(
            registry: VoiceRegistry(providers: [PiperProvider(), EspeakProvider(), FliteProvider()]),
            cacheDirectory: directory.file("cache"))
        configuration.transcriber = .off
        let rendered = try await render(chat, with: Chorus(configuration: configuration))
        #expect(rendered.result.timeline.segments[0].words?.map(\.word) == ["See", "you", "on", "Flurgday"])
        #expect(rendered.result.timeline.segments[1].words?.map(\.word) == ["Or", "on", "Blorkday"])
        let audio = try AudioFileReader(
            data: try #require(rendered.result.audio), name: "out.wav",
            outputFormat: AudioFormat(sampleRate: 16_000, channels: 1)
        ).readAll()
        let recognizer = try await whisperRecognizer()
        let heard = try await recognizer.transcribe(audio.samples).text.lowercased()
        #expect(heard.contains("tuesday") && heard.contains("friday"), "\(heard)")
    }

    @Test(
        "ElevenLabs: IPA through a pronunciation dictionary with the models that apply phoneme rules (made once, its locator with each request that has the word, the word sent as written); other models get the alias"
    )
    func elevenLabsDictionary() async throws {
        let server = try StubServer { request in
            if request.path == "/v1/pronunciation-dictionaries/add-from-rules" {
                return .json(200, ["id": "dict\(request.body.count)", "version_id": "v1", "name": request.json?["name"] as? String ?? ""])
            }
            return StubAudio.elevenLabs(request)
        }
        let directory = try TemporaryDirectory()
        func chat(model: String, ipa: String) throws -> Conversation {
            try conversation(
                #"""
                {"voices": {"A": "elevenlabs:voice1"}, "voice_settings": {"elevenlabs": {"model_id": "\#(model)"}},
                 "lexicon": {"Siobhan": {"ipa": "\#(ipa)", "alias": "shiv awn"}, "Nguyen": "win"},
                 "messages": [{"speaker": "A", "text": "Ask Siobhan and Nguyen."}, {"speaker": "A", "text": "SIOBHAN is late."},
                              {"speaker": "A", "text": "No names here."}, {"speaker": "A", "text": "Siobhan again."}]}
                """#, in: directory)
        }
        func speech() -> [[String: Any]] { server.requests.filter { $0.path.contains("/text-to-speech/") }.compactMap(\.json) }
        func dictionaries() -> [[String: Any]] { server.requests.filter { $0.path.contains("pronunciation-dictionaries") }.compactMap(\.json) }
        let rendered = try await render(
            try chat(model: "eleven_flash_v2", ipa: "ʃɪˈvɔːn"), with: makeChorus(server: server, cache: directory.file("cache")))
        #expect(
            Set(speech().compactMap { $0["text"] as? String }) == ["Ask Siobhan and win.", "SIOBHAN is late.", "No names here.", "Siobhan again."])
        // One dictionary per set of rules (the word as written): the first and last messages share one, made once though
        // they were synthesized at the same time.
        let made = dictionaries()
        #expect(made.count == 2)
        let rules = made.compactMap { ($0["rules"] as? [[String: Any]])?.first }
        #expect(Set(rules.compactMap { $0["string_to_replace"] as? String }) == ["Siobhan", "SIOBHAN"])
        #expect(
            rules.allSatisfy { $0["type"] as? String == "phoneme" && $0["phoneme"] as? String == "ʃɪˈvɔːn" && $0["alphabet"] as? String == "ipa" })
        for body in speech() {
            let locators = body["pronunciation_dictionary_locators"] as? [[String: Any]]
            if (body["text"] as? String)?.contains("names") == true {
                #expect(locators == nil)
            } else {
                #expect(
                    locators?.count == 1 && (locators?.first?["pronunciation_dictionary_id"] as? String)?.hasPrefix("dict") == true
                        && locators?.first?["version_id"] as? String == "v1", "\(body)")
            }
        }
        #expect(rendered.result.timeline.segments[0].words?.map(\.word) == ["Ask", "Siobhan", "and", "Nguyen"])
        // The same again: nothing asked (the cache), no dictionary made. Another IPA: only the three messages with the word.
        _ = try await render(try chat(model: "eleven_flash_v2", ipa: "ʃɪˈvɔːn"), with: makeChorus(server: server, cache: directory.file("cache")))
        #expect(speech().count == 4 && dictionaries().count == 2)
        _ = try await render(try chat(model: "eleven_flash_v2", ipa: "ʃəˈvɔːn"), with: makeChorus(server: server, cache: directory.file("cache")))
        #expect(speech().count == 7 && dictionaries().count == 4)
        // A model that skips phoneme rules: the alias, no dictionary.
        _ = try await render(
            try chat(model: "eleven_multilingual_v2", ipa: "ʃɪˈvɔːn"), with: makeChorus(server: server, cache: directory.file("cache")))
        let last = speech().suffix(4)
        #expect(
            Set(last.compactMap { $0["text"] as? String }) == ["Ask shiv awn and win.", "shiv awn is late.", "No names here.", "shiv awn again."])
        #expect(last.allSatisfy { $0["pronunciation_dictionary_locators"] == nil } && dictionaries().count == 4)
    }

    @Test("an offline voice says the alias: the Whisper model hears it, the timeline shows the written word")
    func heardByRecognizer() async throws {
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"lexicon": {"Flurgday": "Tuesday"}, "messages": [{"speaker": "A", "text": "See you on Flurgday.", "voice": "flite:slt"}]}
            """#, in: directory)
        let rendered = try await render(chat, with: makeChorus(server: nil, cache: directory.file("cache")))
        #expect(rendered.result.timeline.segments[0].words?.map(\.word) == ["See", "you", "on", "Flurgday"])
        let audio = try AudioFileReader(
            data: try #require(rendered.result.audio), name: "out.wav",
            outputFormat: AudioFormat(sampleRate: 16_000, channels: 1)
        ).readAll()
        let recognizer = try await whisperRecognizer()
        let heard = try await recognizer.transcribe(audio.samples)
        #expect(heard.text.lowercased().contains("tuesday"), "\(heard.text)")
    }
}

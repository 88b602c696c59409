import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusService
@testable import ChorusText

@Suite("Service: pronunciation lexicons stored per key and used by name")
struct LexiconRouteTests {
    static let otherKey = "second-key-for-lexicon-tests"

    @Test("PUT stores (201) or replaces (200), GET lists and returns one, DELETE removes; each key sees only its own")
    func storedPerKey() async throws {
        let service = try TestService { $0.apiKeys = [serviceKey, Self.otherKey] }
        try await service.test { client in
            let family =
                #"{"entries": {"Nguyen": "win", "Siobhan": {"ipa": "ʃɪˈvɔːn", "alias": "shiv awn"}, "Reading": {"alias": "Redding", "case_sensitive": true}}}"#
            let created = try await client.call(.put, "/v1/lexicons/family", json: family)
            #expect(created.status == .created, "\(created.text)")
            let info = try created.decode(LexiconInfo.self)
            #expect(info.name == "family" && info.entryCount == 3 && info.digest.count == 64)
            #expect(info.entries?["Nguyen"] == .string("win"))
            #expect(info.entries?["Siobhan"] == .object(["ipa": .string("ʃɪˈvɔːn"), "alias": .string("shiv awn")]))
            #expect(created.headers[.contentLocation] == "/v1/lexicons/family")
            // The same again: replaced, same digest; changed: another digest.
            let again = try await client.call(.put, "/v1/lexicons/family", json: family)
            #expect(try again.status == .ok && (try again.decode(LexiconInfo.self)).digest == info.digest)
            let changed = try await client.call(.put, "/v1/lexicons/family", json: #"{"entries": {"Nguyen": "gwen"}}"#)
            #expect(try changed.status == .ok && (try changed.decode(LexiconInfo.self)).digest != info.digest)
            #expect(
                try await client.call(.put, "/v1/lexicons/church", json: #"{"entries": {"Nebuchadnezzar": {"ipa": "ˌnɛbjʊkədˈnɛzəɹ"}}}"#).status
                    == .created)
            let list = try await client.call(.get, "/v1/lexicons").decode(LexiconList.self)
            #expect(list.lexicons.map(\.name) == ["church", "family"] && list.lexicons.allSatisfy { $0.entries == nil })
            #expect(list.lexicons.map(\.entryCount) == [1, 1])
            let one = try await client.call(.get, "/v1/lexicons/family").decode(LexiconInfo.self)
            #expect(one.entries == ["Nguyen": .string("gwen")])
            // Another key: none of them, and it cannot read or delete them.
            #expect(try await client.call(.get, "/v1/lexicons", key: Self.otherKey).decode(LexiconList.self).lexicons.isEmpty)
            #expect(try await client.call(.get, "/v1/lexicons/family", key: Self.otherKey).status == .notFound)
            #expect(try await client.call(.delete, "/v1/lexicons/family", key: Self.otherKey).status == .notFound)
            #expect(try await client.call(.get, "/v1/lexicons", key: nil).status == .unauthorized)
            #expect(try await client.call(.delete, "/v1/lexicons/family").status == .noContent)
            #expect(try await client.call(.get, "/v1/lexicons/family").status == .notFound)
            #expect(try await client.call(.delete, "/v1/lexicons/family").status == .notFound)
            #expect(try await client.call(.get, "/v1/lexicons").decode(LexiconList.self).lexicons.map(\.name) == ["church"])
        }
    }

    @Test("bad names, entries and sizes are refused naming the field; nothing is stored")
    func refused() async throws {
        let service = try TestService()
        try await service.test { client in
            let cases: [(String, String, Int, String)] = [
                ("/v1/lexicons/bad%20name", #"{"entries": {"a": "b"}}"#, 400, "name"),
                ("/v1/lexicons/" + String(repeating: "x", count: 65), #"{"entries": {"a": "b"}}"#, 400, "name"),
                ("/v1/lexicons/family", #"{"entries": {"Siobhan": {"ipa": "SIv'O:n"}}}"#, 422, "entries.Siobhan.ipa"),
                ("/v1/lexicons/family", #"{"entries": {"two words": "x"}}"#, 422, "entries.two words"),
                ("/v1/lexicons/family", #"{"entries": {"Nguyen": {"case_sensitive": true}}}"#, 422, "entries.Nguyen"),
                ("/v1/lexicons/family", #"{"entries": ["Nguyen"]}"#, 400, "entries"),
                ("/v1/lexicons/family", #"{"entries": {"Nguyen": "win""#, 400, ""),
            ]
            for (path, body, status, field) in cases {
                let response = try await client.call(.put, path, json: body)
                #expect(Int(response.status.code) == status, "\(path) \(body): \(response.text)")
                if !field.isEmpty { #expect(try response.decode(ErrorBody.self).error.field == field, "\(body): \(response.text)") }
            }
            let many = "{\"entries\": {" + (0..<10_001).map { "\"w\($0)\": \"x\"" }.joined(separator: ",") + "}}"
            #expect(try await client.call(.put, "/v1/lexicons/big", json: many).status == .contentTooLarge)
            let huge = "{\"entries\": {\"w\": \"" + String(repeating: "x", count: 300_000) + "\"}}"
            #expect(try await client.call(.put, "/v1/lexicons/big", json: huge).status == .contentTooLarge)
            #expect(try await client.call(.get, "/v1/lexicons").decode(LexiconList.self).lexicons.isEmpty)
            // At most 100 per key; replacing one of them still works.
            for index in 0..<LexiconStore.maximumLexicons {
                #expect(try await client.call(.put, "/v1/lexicons/l\(index)", json: #"{"entries": {"a": "b"}}"#).status == .created)
            }
            let over = try await client.call(.put, "/v1/lexicons/one-more", json: #"{"entries": {"a": "b"}}"#)
            #expect(over.status == .conflict && over.errorCode == "too_many_lexicons", "\(over.text)")
            #expect(try await client.call(.put, "/v1/lexicons/l7", json: #"{"entries": {"a": "c"}}"#).status == .ok)
        }
    }

    @Test("a render, /v1/speech and /v1/audio/speech use a stored lexicon by name; a change re-synthesizes only what it touches and changes the id")
    func usedByName() async throws {
        let stub = try StubSpeech.openAIServer(latency: 0)
        let service = try TestService(stub: stub)
        try await service.test { client in
            #expect(try await client.call(.put, "/v1/lexicons/family", json: #"{"entries": {"Nguyen": "win"}}"#).status == .created)
            let render = #"""
                {"messages": [{"speaker": "A", "text": "Ask Mrs Nguyen.", "voice": "openai:nova"},
                              {"speaker": "B", "text": "Dinner is at seven.", "voice": "openai:alloy"}],
                 "lexicon": "family", "output": {"format": "wav"}}
                """#
            let first = try await client.call(.post, "/v1/renders", json: render)
            #expect(first.status == .created, "\(first.text)")
            let manifest = try first.decode(RenderManifest.self)
            #expect(Set(stub.requests.compactMap { $0.json?["input"] as? String }) == ["Ask Mrs win.", "Dinner is at seven."])
            #expect(manifest.timeline?.segments[0].text == "Ask Mrs Nguyen.")
            // The same lexicon given inline is the same render.
            let inline = render.replacingOccurrences(of: #""lexicon": "family""#, with: #""lexicon": {"Nguyen": "win"}"#)
            let same = try await client.call(.post, "/v1/renders", json: inline)
            #expect(try same.status == .ok && (try same.decode(RenderManifest.self)).id == manifest.id, "\(same.text)")
            // Changed: another render, and only the message with the word is asked for again.
            #expect(try await client.call(.put, "/v1/lexicons/family", json: #"{"entries": {"Nguyen": "gwen"}}"#).status == .ok)
            let before = stub.requests.count
            let second = try await client.call(.post, "/v1/renders", json: render)
            #expect(try second.status == .created && (try second.decode(RenderManifest.self)).id != manifest.id)
            #expect(stub.requests.count == before + 1 && stub.requests.last?.json?["input"] as? String == "Ask Mrs gwen.")
            // /v1/speech and the OpenAI-compatible route (OpenAI's SDKs send it as extra_body).
            let speech = try await client.call(.post, "/v1/speech", json: #"{"text": "Hello Nguyen.", "voice": "openai:nova", "lexicon": "family"}"#)
            #expect(speech.status == .created && stub.requests.last?.json?["input"] as? String == "Hello gwen.", "\(speech.text)")
            let openAI = try await client.call(
                .post, "/v1/audio/speech",
                json: #"{"model": "tts-1", "input": "Hi Nguyen.", "voice": "openai:nova", "lexicon": "family"}"#)
            #expect(openAI.status == .ok && stub.requests.last?.json?["input"] as? String == "Hi gwen.", "\(openAI.text.prefix(300))")
            // Unknown names and other values are refused naming the field; nothing is asked of the provider.
            let count = stub.requests.count
            let unknown = try await client.call(.post, "/v1/renders", json: render.replacingOccurrences(of: "\"family\"", with: "\"nobody\""))
            #expect(
                try unknown.status.code == 422 && unknown.errorCode == "unknown_lexicon"
                    && (try unknown.decode(ErrorBody.self)).error.field == "lexicon")
            let wrong = try await client.call(.post, "/v1/speech", json: #"{"text": "Hi.", "voice": "openai:nova", "lexicon": 3}"#)
            #expect(try wrong.status == .badRequest && (try wrong.decode(ErrorBody.self)).error.field == "lexicon")
            let badInline = try await client.call(
                .post, "/v1/renders", json: render.replacingOccurrences(of: "\"family\"", with: #"{"Nguyen": {"ipa": "x y"}}"#))
            #expect(
                try badInline.status.code == 422 && (try badInline.decode(ErrorBody.self)).error.field == "lexicon.Nguyen.ipa", "\(badInline.text)")
            #expect(stub.requests.count == count)
        }
    }

    @Test("an IPA entry stored in the service is said by an offline voice that takes phonemes; the timeline shows the written word")
    func ipaThroughService() async throws {
        let service = try TestService()
        try await service.test { client in
            #expect(try await client.call(.put, "/v1/lexicons/days", json: #"{"entries": {"Bob": {"ipa": "ˌnɛbjʊkədˈnɛzəɹ"}}}"#).status == .created)
            var seconds: [Double] = []
            for (text, lexicon) in [("See you Bob.", #", "lexicon": "days""#), ("See you Nebuchadnezzar.", ""), ("See you Bob.", "")] {
                let response = try await client.call(
                    .post, "/v1/speech", json: #"{"text": "\#(text)", "voice": "espeak:en-us", "format": "wav"\#(lexicon)}"#)
                #expect(response.status == .created, "\(response.text)")
                let segment = try #require(try response.decode(RenderManifest.self).timeline?.segments.first)
                #expect(segment.words?.map(\.word) == WordAligner.words(in: text).map(\.word))
                seconds.append(segment.end - segment.start)
            }
            // espeak-ng says the entry's IPA as it says "Nebuchadnezzar": the same length to a few hundredths (the word
            // as written, without the lexicon, is far shorter).
            #expect(abs(seconds[0] - seconds[1]) < 0.05 && seconds[1] - seconds[2] > 0.3, "\(seconds)")
        }
    }
}

import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusService
@testable import ChorusSpeech

@Suite("Service: speech and the OpenAI-compatible route")
struct SpeechRouteTests {
    @Test("POST /v1/speech is a one-message render with word timings (or without, if asked)")
    func speech() async throws {
        let service = try TestService()
        try await service.test { client in
            let response = try await client.call(
                .post, "/v1/speech", json: #"{"text": "Blessed are the meek.", "voice": "espeak:en-us", "format": "ogg"}"#)
            #expect(response.status == .created, "\(response.text)")
            let manifest = try response.decode(RenderManifest.self)
            #expect(manifest.format == "ogg" && manifest.timeline?.segments.count == 1)
            let words = try #require(manifest.timeline?.segments[0].words)
            #expect(words.map(\.word) == ["Blessed", "are", "the", "meek"])
            let plain = try await client.call(
                .post, "/v1/speech", json: #"{"text": "Blessed are the meek.", "voice": "espeak:en-us", "format": "ogg", "words": false}"#)
            #expect(try plain.status == .ok && (try plain.decode(RenderManifest.self)).timeline?.segments[0].words == nil)
        }
    }

    @Test("a pause in the text: the words shown without it, the audio longer by it; a malformed one is refused naming the field")
    func pauses() async throws {
        let service = try TestService()
        try await service.test { client in
            var seconds: [Double] = []
            for text in ["Dinner is ready. [pause:2s] Come down.", "Dinner is ready. Come down."] {
                let response = try await client.call(.post, "/v1/speech", json: #"{"text": "\#(text)", "voice": "espeak:en-us", "format": "ogg"}"#)
                #expect(response.status == .created || response.status == .ok, "\(response.text)")
                let manifest = try response.decode(RenderManifest.self)
                let segment = try #require(manifest.timeline?.segments.first)
                #expect(segment.text == "Dinner is ready. Come down.")
                #expect(segment.words?.map(\.word) == ["Dinner", "is", "ready", "Come", "down"])
                seconds.append(segment.end - segment.start)
            }
            #expect(abs(seconds[0] - seconds[1] - 2) < 0.4, "\(seconds)")
            let bad = try await client.call(.post, "/v1/speech", json: #"{"text": "Hi [pause:soon] there", "voice": "espeak:en-us"}"#)
            let body = try bad.decode(ErrorBody.self)
            #expect(bad.status.code >= 400 && bad.status.code < 500 && body.error.message.contains("[pause:soon]"), "\(bad.text)")
        }
    }

    @Test("the exact JSON OpenAI's SDKs send gets audio back; bare voice names work offline; pcm is raw 24 kHz 16-bit")
    func openAICompatible() async throws {
        let service = try TestService()
        try await service.test { client in
            // What openai-python's client.audio.speech.create(model=…, voice="coral", input=…) posts.
            let sdk =
                #"{"input":"Today is a wonderful day to build something people love!","model":"gpt-4o-mini-tts","voice":"coral","instructions":"Speak in a cheerful and positive tone.","response_format":"mp3"}"#
            let mp3 = try await client.call(.post, "/v1/audio/speech", json: sdk)
            #expect(mp3.status == .ok && mp3.headers[.contentType] == "audio/mpeg", "\(mp3.text.prefix(300))")
            let decoded = try AudioFileReader(data: mp3.data, name: "mp3").readAll()
            #expect(decoded.format.sampleRate == 24_000 && decoded.duration > 2)
            let pcm = try await client.call(
                .post, "/v1/audio/speech", json: #"{"model":"tts-1","input":"Hello there.","voice":"alloy","response_format":"pcm"}"#)
            #expect(pcm.status == .ok && pcm.headers[.contentType] == "audio/pcm" && pcm.data.count % 2 == 0 && pcm.data.count > 24_000)
            let wav = try await client.call(
                .post, "/v1/audio/speech", json: #"{"model":"tts-1","input":"Hello there.","voice":"alloy","response_format":"wav"}"#)
            #expect(wav.data.suffix(pcm.data.count) == pcm.data, "pcm is the WAV's samples")
            let bad = try await client.call(.post, "/v1/audio/speech", json: #"{"model":"tts-1","input":"Hi","voice":"nobody"}"#)
            #expect(try bad.status == .badRequest && (try bad.decode(ErrorBody.self)).error.field == "voice")
            let fast = try await client.call(.post, "/v1/audio/speech", json: #"{"model":"tts-1","input":"Hi","voice":"alloy","speed":4.5}"#)
            let refused = try fast.decode(ErrorBody.self).error
            #expect(fast.status == .badRequest && refused.field == "speed" && refused.message == "speed must be between 0.25 and 4", "\(refused)")
        }
    }

    @Test("every OpenAI voice has an offline stand-in, and only those do; each has a place in the natural stand-ins' order")
    func standIns() {
        #expect(Set(SpeechController.offlineVoices.keys) == Set(OpenAIProvider.builtInVoices))
        #expect(SpeechController.standInOrder.sorted() == OpenAIProvider.builtInVoices.sorted())
        // kokoro-onnx's voices-v1.0.bin beside set-up's: names first (as Kokoro-FastAPI maps them), then one free voice
        // of the name's sound each; never one voice for two names.
        let v1 = ["af_heart", "af_alloy", "af_bella", "af_nova", "am_echo", "am_onyx", "am_michael", "bm_fable", "bf_emma"]
        let natural = (v1 + ["jf_gongitsune", "jm_kumo"]).map { VoiceID(provider: "kokoro", voice: $0) }
        let standIns = SpeechController.naturalStandIns(natural: natural).mapValues(\.voice)
        #expect(
            standIns == [
                "alloy": "af_alloy", "nova": "af_nova", "echo": "am_echo", "onyx": "am_onyx", "fable": "bm_fable", "shimmer": "af_heart",
                "ash": "am_michael", "coral": "af_bella", "ballad": "jm_kumo", "sage": "bf_emma", "marin": "jf_gongitsune",
            ], "\(standIns)")
        #expect(Set(standIns.values).count == standIns.count)
    }

    @Test("with an OpenAI key, bare names go to OpenAI with the model, speed and instructions")
    func openAIForwarded() async throws {
        let stub = try StubSpeech.openAIServer(latency: 0)
        let service = try TestService(stub: stub)
        try await service.test { client in
            let response = try await client.call(
                .post, "/v1/audio/speech",
                json: #"{"model":"gpt-4o-mini-tts","input":"Forwarded.","voice":"nova","speed":1.25,"instructions":"Calm."}"#)
            #expect(response.status == .ok)
            let sent = try #require(stub.requests.first?.json)
            #expect(sent["voice"] as? String == "nova" && sent["model"] as? String == "gpt-4o-mini-tts")
            #expect(sent["speed"] as? Double == 1.25 && sent["instructions"] as? String == "Calm.")
        }
    }

    @Test("the natural voice: listed, speaks /v1/speech with words, and stands in for OpenAI's onyx with no OpenAI key")
    func naturalVoice() async throws {
        let service = try TestService { configuration in
            configuration.registry = VoiceRegistry(providers: [PiperProvider()] + (configuration.registry?.providers.values.map { $0 } ?? []))
        }
        try await service.test { client in
            let voices = try await client.call(.get, "/v1/voices")
            #expect(voices.text.contains("piper:en_US-joe-medium"), "\(voices.text.prefix(300))")
            let response = try await client.call(
                .post, "/v1/speech", json: #"{"text": "Blessed are the meek.", "voice": "piper:en_US-joe-medium", "format": "wav"}"#)
            #expect(response.status == .created, "\(response.text)")
            let words = try #require(try response.decode(RenderManifest.self).timeline?.segments[0].words)
            #expect(words.map(\.word) == ["Blessed", "are", "the", "meek"])
            let onyx = try await client.call(
                .post, "/v1/audio/speech", json: #"{"model":"tts-1","input":"Hello there.","voice":"onyx","response_format":"wav"}"#)
            let joe = try await client.call(
                .post, "/v1/audio/speech", json: #"{"model":"tts-1","input":"Hello there.","voice":"piper:en_US-joe-medium","response_format":"wav"}"#
            )
            let alloy = try await client.call(
                .post, "/v1/audio/speech", json: #"{"model":"tts-1","input":"Hello there.","voice":"alloy","response_format":"wav"}"#)
            #expect(onyx.status == .ok && onyx.data.count > 24_000 && onyx.data == joe.data, "onyx is the natural voice, sample for sample")
            let espeak = try await client.call(
                .post, "/v1/audio/speech",
                json:
                    #"{"model":"tts-1","input":"Hello there.","voice":"espeak:\#(SpeechController.offlineVoices["alloy"]!)","response_format":"wav"}"#
            )
            #expect(alloy.status == .ok && alloy.data == espeak.data, "alloy keeps its espeak-ng stand-in (no natural voice sounds female)")
        }
    }

    @Test("a voice of this machine speaks the opening clause as a piece of its own, after which the rest follows its pause")
    func openingClause() throws {
        let kokoro = VoiceID(provider: "kokoro", voice: "jf_alpha")
        let pieces = SpeechController.messages("Running late, practice moved. See you!", voice: kokoro, local: true)
        #expect(pieces.map(\.text) == ["Running late,", "practice moved. See you!"])
        #expect(pieces.map(\.gapMs) == [nil, SpeechController.clausePauseMilliseconds])
        #expect(pieces.allSatisfy { $0.voice == "kokoro:jf_alpha" && $0.speaker == "Speaker" })
        let sentence = SpeechController.messages("Good news! Grandma lands at noon.", voice: kokoro, local: true)
        #expect(sentence.map(\.gapMs) == [nil, SpeechController.sentencePauseMilliseconds])
        // A hosted voice is one request; text with nothing to cut is one message.
        #expect(
            SpeechController.messages("Running late, practice moved.", voice: VoiceID(provider: "openai", voice: "nova"), local: false).count == 1)
        #expect(SpeechController.messages("Hello there.", voice: kokoro, local: true).map(\.text) == ["Hello there."])
    }

    @Test("with Kokoro installed and no OpenAI key, OpenAI's names get distinct natural stand-ins of their sound")
    func kokoroStandIns() async throws {
        let service = try TestService { configuration in
            configuration.registry = VoiceRegistry(
                providers: [PiperProvider(), KokoroProvider()] + (configuration.registry?.providers.values.map { $0 } ?? []))
        }
        try await service.test { client in
            func speech(_ voice: String) async throws -> Data {
                let response = try await client.call(
                    .post, "/v1/audio/speech", json: #"{"model":"tts-1","input":"Hello there.","voice":"\#(voice)","response_format":"wav"}"#)
                #expect(response.status == .ok && response.data.count > 24_000, "\(voice): \(response.text.prefix(300))")
                return response.data
            }
            // nova and shimmer: the first two natural voices that sound female; onyx and echo: the two that sound male.
            for (name, standIn) in [
                ("nova", "kokoro:af_linden"), ("shimmer", "kokoro:af_wren"), ("onyx", "kokoro:am_alder"), ("echo", "kokoro:am_rowan"),
            ] {
                let named = try await speech(name)
                #expect(try await named == speech(standIn), "\(name) is \(standIn), sample for sample")
            }
        }
    }
}

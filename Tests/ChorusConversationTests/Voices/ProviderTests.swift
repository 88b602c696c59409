import ChorusAudio
import ChorusFixtures
import ChorusSpeechTestSupport
import ChorusTestSupport
import ChorusText
import ChorusWire
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech

/// ElevenLabs and OpenAI against local stubs that speak their wire contracts.
///
/// Renders through the providers; the providers alone are tested in ChorusSpeechTests.
@Suite("HTTP providers against local stubs")
struct ProviderTests {
    static let elevenVoice = "JBFqnCBsd6RMkjVDRZzb"

    @Test("ElevenLabs: with-timestamps request, PCM output, voice settings, alignment turned into words")
    func elevenLabsContract() async throws {
        let server = try StubServer { request in
            guard request.headers["xi-api-key"] == testKey else {
                return .json(401, ["detail": ["status": "invalid_api_key", "message": "Invalid API key"]])
            }
            return StubAudio.elevenLabs(request)
        }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"voices": {"Marcus": "elevenlabs:\#(Self.elevenVoice)"},
             "voice_settings": {"elevenlabs": {"model_id": "eleven_multilingual_v2", "stability": 0.5, "similarity_boost": 0.8}},
             "messages": [{"speaker": "Marcus", "text": "On my way, see you at 4:30."}, {"speaker": "Marcus", "text": "Traffic is light."}]}
            """#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"))
        let result = try await render(chat, with: synthesizer, to: directory.file("out.wav"))

        let request = try #require(server.requests.first { $0.json?["text"] as? String == "On my way, see you at 4:30." })
        #expect(request.method == "POST")
        #expect(request.path == "/v1/text-to-speech/\(Self.elevenVoice)/with-timestamps")
        #expect(request.query["output_format"] == "pcm_24000")
        let body = try #require(request.json)
        #expect(body["model_id"] as? String == "eleven_multilingual_v2")
        #expect((body["voice_settings"] as? [String: Any])?["stability"] as? Double == 0.5)
        // The same voice speaks both messages: each is sent with the other as context, so the prosody flows on.
        #expect(body["previous_text"] == nil && body["next_text"] as? String == "Traffic is light.")
        let second = try #require(server.requests.first { $0.json?["text"] as? String == "Traffic is light." }?.json)
        #expect(second["previous_text"] as? String == "On my way, see you at 4:30." && second["next_text"] == nil)

        let segment = result.timeline.segments[0]
        #expect(segment.voice == "elevenlabs:\(Self.elevenVoice)")
        let words = try #require(segment.words)
        #expect(words.map(\.word) == ["On", "my", "way", "see", "you", "at", "4:30"])
        for word in words { #expect(word.start >= segment.start - 1e-6 && word.end <= segment.end + 1e-6) }
        // The stub speaks 10 ms per character, so the word "way" starts 6 characters after "On".
        #expect(abs((words[2].start - words[0].start) - 0.06) < 0.002)
    }

    @Test("context between messages only when the same voice speaks them in a row; eleven_v3 (no context) gets none")
    func contextBetweenMessages() async throws {
        let server = try StubServer { request in
            if request.path.hasPrefix("/v1/audio/speech") {
                return StubServer.Response(status: 200, body: StubAudio.pcm16(for: request.json?["input"] as? String ?? ""))
            }
            return StubAudio.elevenLabs(request)
        }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"voices": {"Marcus": "elevenlabs:\#(Self.elevenVoice)", "Sarah": "openai:nova"},
             "messages": [{"speaker": "Marcus", "text": "One."}, {"speaker": "Sarah", "text": "Two."}, {"speaker": "Marcus", "text": "Three."},
                          {"speaker": "Marcus", "text": "Four."}]}
            """#, in: directory)
        _ = try await render(chat, with: makeChorus(server: server, cache: directory.file("cache")))
        func body(_ text: String) -> [String: Any]? { server.requests.first { $0.json?["text"] as? String == text }?.json }
        #expect(body("One.")?["previous_text"] == nil && body("One.")?["next_text"] == nil, "Sarah speaks between")
        #expect(body("Three.")?["previous_text"] == nil && body("Three.")?["next_text"] as? String == "Four.")
        #expect(body("Four.")?["previous_text"] as? String == "Three." && body("Four.")?["next_text"] == nil)
        // eleven_v3 refuses context: none is sent.
        let v3 = try conversation(
            #"""
            {"voices": {"Marcus": "elevenlabs:\#(Self.elevenVoice)"}, "voice_settings": {"elevenlabs": {"model_id": "eleven_v3"}},
             "messages": [{"speaker": "Marcus", "text": "Five."}, {"speaker": "Marcus", "text": "Six."}]}
            """#, in: directory)
        _ = try await render(v3, with: makeChorus(server: server, cache: directory.file("cache")))
        #expect(body("Five.")?["next_text"] == nil && body("Six.")?["previous_text"] == nil)
    }

    @Test("ElevenLabs: when the plan refuses PCM (403), MP3 is used, and later messages start with it")
    func elevenLabsFormatFallback() async throws {
        let server = try StubServer { request in
            if request.query["output_format"]?.hasPrefix("pcm") == true {
                return .json(
                    403,
                    [
                        "detail": [
                            "status": "subscription_required",
                            "message": "Output format 'pcm_24000' is only available on the Pro tier and above",
                        ]
                    ])
            }
            return StubAudio.elevenLabs(request, format: request.query["output_format"] ?? "")
        }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"voices": {"A": "elevenlabs:\#(Self.elevenVoice)"}, "messages": [{"speaker": "A", "text": "One message."}]}
            """#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"))
        let result = try await render(chat, with: synthesizer, to: directory.file("out.wav"))
        #expect(server.requests.map { $0.query["output_format"] ?? "" } == ["pcm_24000", "mp3_44100_128"])
        #expect(result.timeline.segments[0].endSample > 0)
        // Cached under the MP3 key: a new synthesizer finds it without asking again.
        let again = try makeChorus(server: server, cache: directory.file("cache"))
        _ = try await render(chat, with: again)
        #expect(server.requests.count == 2)
    }

    @Test("OpenAI: /v1/audio/speech with bearer auth and PCM; no word timings")
    func openAIContract() async throws {
        let server = try StubServer { request in
            guard request.headers["authorization"] == "Bearer \(testKey)" else {
                return .json(401, ["error": ["message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"]])
            }
            return StubServer.Response(
                status: 200, headers: ["Content-Type": "application/octet-stream"],
                body: StubAudio.pcm16(for: request.json?["input"] as? String ?? ""))
        }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"voice_settings": {"openai": {"model": "gpt-4o-mini-tts", "speed": 1.1, "instructions": "Warm and calm."}},
             "messages": [{"speaker": "Aisha", "text": "Mom's appointment is at 10.", "voice": "openai:alloy"}]}
            """#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"), transcriber: .automatic)
        let result = try await render(chat, with: synthesizer, to: directory.file("out.wav"))
        let request = try #require(server.requests.first)
        #expect(request.path == "/v1/audio/speech")
        let body = try #require(request.json)
        #expect(body["model"] as? String == "gpt-4o-mini-tts")
        #expect(body["input"] as? String == "Mom's appointment is at 10.")
        #expect(body["voice"] as? String == "alloy")
        #expect(body["response_format"] as? String == "pcm")
        #expect(body["speed"] as? Double == 1.1)
        #expect(body["instructions"] as? String == "Warm and calm.")
        // OpenAI gives no word times: the text is aligned to the speech by the offline recognizer, every word once,
        // in order, inside the segment (the stub's "speech" is a tone, so the words share its time evenly).
        let segment = result.timeline.segments[0]
        #expect(segment.words?.map(\.word) == ["Mom's", "appointment", "is", "at", "10"] && segment.transcribed == nil)
        #expect(segment.words?.allSatisfy { $0.start >= segment.start && $0.end <= segment.end } == true)
        #expect(result.timeline.segments[0].voice == "openai:alloy")
        // 27 characters × 10 ms of tone = 0.3 s (the stub's minimum), trimmed to within 25 ms margins.
        let length = Double(result.timeline.segments[0].endSample) / 44_100
        #expect(length > 0.29 && length < 0.36)
    }

    @Test(
        "OpenAI's real speech, no word times: each message's text is timed where it is said (packed several to a Whisper window), within 0.1 s of the speaker's own times (median), every word once, and the same from the cache"
    )
    func openAIWordsOnRealSpeech() async throws {
        let texts = [
            "Running late, practice moved to half past four.", "Bring water and snacks for the whole team.",
            "Grandma says the train gets in at noon.",
        ]
        // Flite speaks each text (with its own word times); the stub answers with that speech, as OpenAI's PCM.
        var answers: [String: Data] = [:]
        var spoken: [String: [WordTiming]] = [:]
        for text in texts {
            let (samples, words) = try await FliteSpeech.speech(text)
            answers[text] = try StubSpeech.pcm16(AudioBuffer(format: AudioFormat(sampleRate: 16_000, channels: 1), samples: samples))
            spoken[text] = words
        }
        let speech = answers
        let server = try StubSpeech.openAIServer(latency: 0.05) { speech[$0] }
        let directory = try TemporaryDirectory()
        let messages = texts.map { #"{"speaker": "Aisha", "text": "\#($0)", "voice": "openai:alloy"}"# }.joined(separator: ", ")
        let chat = try conversation(#"{"messages": [\#(messages)]}"#, in: directory)
        let chorus = try makeChorus(server: server, cache: directory.file("cache"), transcriber: .automatic)
        let result = try await render(chat, with: chorus, to: directory.file("out.wav")).result
        var errors: [Double] = []
        for (segment, text) in zip(result.timeline.segments, texts) {
            let words = try #require(segment.words)
            #expect(words.map(\.word) == WordAligner.words(in: text).map(\.word) && segment.transcribed == nil)
            #expect(words.allSatisfy { $0.start >= segment.start && $0.end <= segment.end && $0.start <= $0.end }, "\(words)")
            // Flite's times are from its clip's start, the timeline's from the output's: compared from each first word.
            let own = try #require(spoken[text])
            #expect(own.count == words.count)
            errors += zip(words, own).map { abs(($0.start - words[0].start) - ($1.start - own[0].start)) }
        }
        errors.sort()
        print(
            "OpenAI words on real speech: \(errors.count) words, median \(Int(errors[errors.count / 2] * 1000)) ms / 90 % \(Int(errors[errors.count * 9 / 10] * 1000)) ms from the speaker's own times"
        )
        #expect(errors[errors.count / 2] < 0.1 && errors[errors.count * 9 / 10] < 0.25, "\(errors)")
        // Rendered again from the cache (speech and alignments): the same words, no request made.
        let requests = server.requests.count
        let again = try await render(chat, with: chorus, to: directory.file("again.wav")).result
        #expect(again.timeline.segments.map(\.words) == result.timeline.segments.map(\.words))
        #expect(server.requests.count == requests)
    }

    @Test("429 with Retry-After and 5xx are retried; the render succeeds and counts the retries")
    func retries() async throws {
        let calls = Counter()
        let server = try StubServer { request in
            switch calls.next() {
            case 1:
                return .json(
                    429, ["detail": ["status": "too_many_concurrent_requests", "message": "Too many concurrent requests."]],
                    headers: ["Retry-After": "0"])
            case 2: return .json(503, ["detail": "Service temporarily unavailable"])
            default: return StubAudio.elevenLabs(request)
            }
        }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"{"voices": {"A": "elevenlabs:\#(Self.elevenVoice)"}, "messages": [{"speaker": "A", "text": "Hello."}]}"#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"))
        let rendered = try await render(chat, with: synthesizer, to: directory.file("out.wav"))
        #expect(server.requests.count == 3)
        #expect(rendered.progress.retries == 2 && rendered.progress.requests == 3)
    }

    @Test("a dropped connection is retried; Retry-After is honoured")
    func droppedConnectionAndRetryAfter() async throws {
        let calls = Counter()
        let server = try StubServer { request in
            switch calls.next() {
            case 1: return StubServer.Response(status: 200, drop: true)
            case 2: return .json(429, ["detail": ["status": "system_busy", "message": "busy"]], headers: ["Retry-After": "1"])
            default: return StubAudio.elevenLabs(request)
            }
        }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"{"voices": {"A": "elevenlabs:\#(Self.elevenVoice)"}, "messages": [{"speaker": "A", "text": "Hello."}]}"#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"))
        let started = Date()
        let rendered = try await render(chat, with: synthesizer)
        #expect(server.requests.count == 3)
        #expect(Date().timeIntervalSince(started) >= 0.95, "waited for Retry-After: 1")
        #expect(rendered.progress.retries == 2)
    }

    @Test("a request that times out is retried")
    func timeoutRetried() async throws {
        let calls = Counter()
        let server = try StubServer { request in
            var response = StubAudio.elevenLabs(request)
            // Stall far past the 1 s timeout: the client deadline needs a free cooperative thread, which the
            // CPU-heavy suites running beside this one can hold for many seconds.
            if calls.next() == 1 { response.delay = 60 }
            return response
        }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"{"voices": {"A": "elevenlabs:\#(Self.elevenVoice)"}, "messages": [{"speaker": "A", "text": "Hello."}]}"#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"), timeout: 1)
        let rendered = try await render(chat, with: synthesizer, to: directory.file("out.wav"))
        #expect(server.requests.count == 2)
        #expect(rendered.progress.retries == 1)
    }

    @Test(
        "authentication, quota, bad voice and validation errors fail at once, naming provider, message and reason, never the key",
        arguments: [
            (
                401, #"{"detail": {"status": "invalid_api_key", "message": "Invalid API key sk-test-SECRET-0123456789abcdef"}}"#,
                "authentication failed"
            ),
            (401, #"{"detail": {"status": "quota_exceeded", "message": "This request exceeds your quota."}}"#, "quota exhausted"),
            (404, #"{"detail": {"status": "voice_not_found", "message": "A voice with the voice_id nope was not found."}}"#, "voice not found"),
            (
                422,
                #"{"detail": [{"type": "float_type", "loc": ["body", "voice_settings", "stability"], "msg": "Input should be a valid number"}]}"#,
                "request rejected: body.voice_settings.stability"
            ),
        ])
    func failFast(status: Int, body: String, reason: String) async throws {
        let server = try StubServer { _ in StubServer.Response(status: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8)) }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"voices": {"Marcus": "elevenlabs:\#(Self.elevenVoice)"}, "messages": [{"speaker": "Ann", "text": "Hi."}, {"speaker": "Marcus", "text": "Hello."}]}
            """#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"))
        let output = directory.file("out.mp3")
        do {
            _ = try await render(chat, with: synthesizer, to: output)
            Issue.record("expected a failure")
        } catch let error as SynthesisError {
            let text = error.description
            #expect(text.contains("messages[1] (Marcus, elevenlabs:\(Self.elevenVoice))"))
            #expect(text.contains("elevenlabs: \(reason)"), "\(text)")
            expectSecretFree(text)
        }
        #expect(server.requests.count == 1, "no retries for permanent errors")
        #expect(!FileManager.default.fileExists(atPath: output.path), "a failed render writes nothing")
    }

    @Test("OpenAI 429 insufficient_quota is not retried; echoed keys are redacted")
    func openAIQuota() async throws {
        let server = try StubServer { _ in
            .json(
                429,
                [
                    "error": [
                        "message": "You exceeded your current quota (key sk-test-SECRET-0123456789abcdef).",
                        "type": "insufficient_quota", "code": "insufficient_quota",
                    ]
                ])
        }
        let directory = try TemporaryDirectory()
        let chat = try conversation(#"{"messages": [{"speaker": "A", "text": "Hello.", "voice": "openai:nova"}]}"#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"))
        await #expect(throws: SynthesisError.self) { _ = try await render(chat, with: synthesizer) }
        do { _ = try await render(chat, with: synthesizer) } catch {
            #expect("\(error)".contains("openai: quota exhausted"))
            expectSecretFree("\(error)")
        }
        #expect(server.requests.count == 2, "one request per attempt, no retries")
    }

    @Test("at most --concurrency requests are in flight per provider")
    func concurrencyLimit() async throws {
        let server = try StubServer { request in
            var response = StubAudio.elevenLabs(request)
            response.delay = 0.15
            return response
        }
        let directory = try TemporaryDirectory()
        let messages = (0..<8).map { #"{"speaker": "A", "text": "Message number \#($0)."}"# }.joined(separator: ",")
        let chat = try conversation(#"{"voices": {"A": "elevenlabs:\#(Self.elevenVoice)"}, "messages": [\#(messages)]}"#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"), concurrency: 2)
        _ = try await render(chat, with: synthesizer)
        #expect(server.requests.count == 8)
        #expect(server.maxInFlight == 2)
    }

    @Test("the fallback voice renders a message whose provider failed permanently, marked in the timeline")
    func fallbackVoice() async throws {
        let server = try StubServer { _ in .json(401, ["detail": ["status": "invalid_api_key", "message": "Invalid API key"]]) }
        let directory = try TemporaryDirectory()
        let chat = try conversation(
            #"""
            {"voices": {"Marcus": "elevenlabs:\#(Self.elevenVoice)"}, "messages": [{"speaker": "Ann", "text": "Hi."}, {"speaker": "Marcus", "text": "Hello there."}]}
            """#, in: directory)
        let synthesizer = try makeChorus(server: server, cache: directory.file("cache"))
        var withFallback = chat
        withFallback.fallbackVoice = VoiceID("espeak:en-us")
        let result = try await render(withFallback, with: synthesizer, to: directory.file("out.wav"))
        let segment = result.timeline.segments[1]
        #expect(segment.fallback == true)
        #expect(segment.voice == "espeak:en-us")
        #expect(result.timeline.segments[0].fallback == nil)
        #expect(result.progress.fallbacks == 1)
        let json = try String(contentsOf: directory.file("out.wav.json"), encoding: .utf8)
        #expect(json.contains("\"fallback\": true"))
    }

    @Test("long text is split at sentences within the limit, sent with previous/next text, and joined without a gap")
    func longText() async throws {
        let server = try StubServer { request in StubAudio.elevenLabs(request) }
        let directory = try TemporaryDirectory()
        let sentence = "This sentence is part of a very long message that goes on and on. "
        let text = String(repeating: sentence, count: 170).trimmingCharacters(in: .whitespaces)  // ≈ 11,400 characters
        let chat = try conversation(
            #"""
            {"voices": {"A": "elevenlabs:\#(Self.elevenVoice)"}, "messages": [{"speaker": "A", "text": "\#(text)"}]}
            """#, in: directory)
        // Building a 114 s response takes the stub a while in a debug build beside the other suites.
        let chorus = try makeChorus(server: server, cache: directory.file("cache"), timeout: 120)
        var options = RenderOptions()
        options.trimSilence = false
        options.normalize = false
        options.sampleRate = 24_000
        let rendered = try await render(chat, with: chorus, options: options)
        let requests = server.requests
        #expect(requests.count == 2)
        let chunks = requests.compactMap { $0.json?["text"] as? String }
        #expect(chunks.allSatisfy { $0.count <= 10_000 && $0.hasSuffix(".") })
        #expect(chunks.joined(separator: " ") == text)
        #expect(requests[0].json?["next_text"] as? String == chunks[1])
        #expect(requests[1].json?["previous_text"] as? String == chunks[0])
        // Joined without a gap: the message is exactly as long as its chunks, and words continue across the join.
        let lengths = chunks.map { StubAudio.pcm16(for: $0).count / 2 }
        #expect(rendered.timeline.samples == lengths.reduce(0, +))
        let words = try #require(rendered.timeline.segments[0].words)
        #expect(words.count == text.split(separator: " ").count)
        let firstOfSecond = chunks[0].split(separator: " ").count
        #expect(abs(words[firstOfSecond].start - (Double(lengths[0]) / 24_000 + StubAudio.edge)) < 0.002)
    }
}

/// A thread-safe call counter for stub handlers.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

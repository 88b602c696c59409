import ChorusAudio
import ChorusFixtures
import ChorusOutbound
import ChorusTestSupport
import ChorusWire
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusListening
@testable import ChorusSpeech

/// OpenAI's and ElevenLabs' speech to text against local stubs that speak their wire contracts, and the same fault
/// matrix as the voices: what is retried (429 with and without Retry-After, 5xx, a hang, a connection cut mid-body)
/// and what is not (401, a 200 that is not a transcription).
@Suite("Speech-to-text providers against local stubs")
struct SpeechToTextProviderTests {
    /// Two seconds of a 16 kHz "voice note": a second of speech-like sound between silences.
    static let request: SpeechToTextRequest = {
        let format = AudioFormat(sampleRate: 16_000, channels: 1)
        let audio = SignalGenerator.concatenate([
            SignalGenerator.silence(seconds: 0.5, format: format),
            SignalGenerator.speechLike(fundamental: 150, seconds: 1, format: format, seed: 7),
            SignalGenerator.silence(seconds: 0.5, format: format),
        ])
        return SpeechToTextRequest(samples: audio.samples, language: "en")
    }()

    /// The multipart form a stub received.
    static func form(_ request: StubServer.Request) throws -> MultipartForm {
        let type = try #require(request.headers["content-type"])
        let boundary = try #require(type.components(separatedBy: "boundary=").last)
        return try MultipartForm(body: request.body, boundary: boundary)
    }

    /// The uploaded file decodes to the request's samples: 16-bit WAV, mono, 16 kHz, every sample.
    static func checkUpload(_ form: MultipartForm) throws {
        let file = try #require(form.part("file"))
        #expect(file.filename == "audio.wav")
        let decoded = try AudioFileReader(data: form.data(of: file), name: "upload").readAll()
        #expect(decoded.format == AudioFormat(sampleRate: 16_000, channels: 1) && decoded.frameCount == request.samples.count)
        #expect(zip(decoded.samples, request.samples).allSatisfy { abs($0 - $1) <= 1.0 / 32_000 })
    }

    /// An engine whose transcriber is `provider`, with fast retries (as the voices' tests).
    static func chorus(_ provider: any SpeechToTextProvider, cache directory: TemporaryDirectory) throws -> Chorus {
        var configuration = Chorus.Configuration(
            cacheDirectory: directory.file("cache"),
            retry: RetryPolicy(maxAttempts: 4, initialDelay: 0.01, maxDelay: 0.05, maxRetryAfter: 5, maxTotal: 600))
        configuration.transcriber = .provider(provider)
        return try Chorus(configuration: configuration)
    }

    @Test("OpenAI whisper-1: the documented multipart request; verbose_json's words become the transcript, its language a code")
    func openAIWhisper() async throws {
        let server = try StubServer { request in
            guard request.headers["authorization"] == "Bearer \(testKey)" else { return .json(401, ["error": ["message": "Incorrect API key"]]) }
            return .json(
                200,
                [
                    "task": "transcribe", "language": "english", "duration": 2.0, "text": " Hello there. ",
                    "words": [["word": "Hello", "start": 0.52, "end": 0.9], ["word": "there", "start": 0.95, "end": 1.4]],
                ])
        }
        let directory = try TemporaryDirectory()
        let chorus = try Self.chorus(OpenAISpeechToText(baseURL: server.baseURL + "/v1", apiKey: testKey), cache: directory)
        let transcript = try await chorus.transcribe(Self.request)
        let sent = try #require(server.requests.first)
        #expect(sent.method == "POST" && sent.path == "/v1/audio/transcriptions")
        let form = try Self.form(sent)
        #expect(try form.text("model") == "whisper-1" && form.text("response_format") == "verbose_json")
        #expect(try form.texts("timestamp_granularities[]") == ["word"] && form.text("language") == "en")
        try Self.checkUpload(form)
        #expect(transcript.text == "Hello there." && transcript.language == "en" && transcript.duration == 2)
        #expect(transcript.words.map(\.word) == ["Hello", "there"])
        #expect(transcript.words.allSatisfy { $0.start >= 0.3 && $0.end <= 2 })
        // The same audio again comes from the transcript cache: no second request.
        _ = try await chorus.transcribe(Self.request)
        #expect(server.requests.count == 1)
        _ = try await chorus.transcribe(Self.request, cached: false)
        #expect(server.requests.count == 2)
    }

    @Test("OpenAI gpt-4o-transcribe answers text only: every word is timed by the aligner, in order, inside the audio")
    func openAITextOnly() async throws {
        let server = try StubServer { _ in .json(200, ["text": "Practice moved to four thirty."]) }
        let directory = try TemporaryDirectory()
        let provider = OpenAISpeechToText(baseURL: server.baseURL, apiKey: testKey, model: "gpt-4o-transcribe")
        let transcript = try await Self.chorus(provider, cache: directory).transcribe(Self.request)
        let form = try Self.form(try #require(server.requests.first))
        #expect(try form.text("response_format") == "json" && form.texts("timestamp_granularities[]").isEmpty)
        #expect(transcript.words.map(\.word) == ["Practice", "moved", "to", "four", "thirty"])
        #expect(transcript.words.allSatisfy { $0.start >= 0 && $0.end <= Self.request.duration + 1e-6 && $0.start <= $0.end })
        #expect(zip(transcript.words, transcript.words.dropFirst()).allSatisfy { $0.start <= $1.start })
    }

    @Test("ElevenLabs scribe: xi-api-key, model_id and word timestamps; spacing and sound events left out; eng is en")
    func elevenLabs() async throws {
        let server = try StubServer { request in
            guard request.headers["xi-api-key"] == testKey else {
                return .json(401, ["detail": ["status": "invalid_api_key", "message": "Invalid API key"]])
            }
            return .json(
                200,
                [
                    "language_code": "eng", "language_probability": 0.98, "text": "Hello there (laughs)",
                    "words": [
                        ["text": "Hello", "start": 0.5, "end": 0.9, "type": "word", "speaker_id": "speaker_0"],
                        ["text": " ", "start": 0.9, "end": 0.95, "type": "spacing"],
                        ["text": "there", "start": 0.95, "end": 1.4, "type": "word"],
                        ["text": "(laughs)", "start": 1.4, "end": 1.5, "type": "audio_event"],
                    ],
                ])
        }
        let directory = try TemporaryDirectory()
        let transcript = try await Self.chorus(ElevenLabsSpeechToText(baseURL: server.baseURL, apiKey: testKey), cache: directory)
            .transcribe(Self.request)
        let sent = try #require(server.requests.first)
        #expect(sent.path == "/v1/speech-to-text")
        let form = try Self.form(sent)
        #expect(try form.text("model_id") == "scribe_v1" && form.text("timestamps_granularity") == "word" && form.text("language_code") == "en")
        try Self.checkUpload(form)
        #expect(transcript.words.map(\.word) == ["Hello", "there"] && transcript.language == "en")
    }

    @Test(
        "both read answers one way: a word whose times are missing or reversed is refused, not retried; text without words is aligned; a word's end is clipped to the audio",
        arguments: ["openai", "elevenlabs"])
    func answerRules(provider name: String) async throws {
        let key = name == "openai" ? "word" : "text"
        func answer(_ words: [[String: Any]], text: String = "Hello there") -> StubServer.Response {
            .json(200, ["text": text, (name == "openai" ? "language" : "language_code"): "en", "words": words])
        }
        let cases: [(String, StubServer.Response, VoiceError.Kind?)] = [
            ("end before start", answer([[key: "Hello", "start": 0.9, "end": 0.5]]), .invalidResponse),
            ("no start", answer([[key: "Hello", "end": 0.5]]), .invalidResponse),
            ("a negative start", answer([[key: "Hello", "start": -1, "end": 0.5]]), .invalidResponse),
            ("text, no words", answer([], text: "Practice moved to four thirty."), nil),
            ("an end past the audio, an empty word", answer([[key: "Hello", "start": 0.5, "end": 9], [key: " ", "start": 1, "end": 1]]), nil),
        ]
        for (label, reply, failure) in cases {
            let server = try StubServer { _ in reply }
            defer { server.stop() }
            let provider: any SpeechToTextProvider =
                name == "openai"
                ? OpenAISpeechToText(baseURL: server.baseURL, apiKey: testKey)
                : ElevenLabsSpeechToText(baseURL: server.baseURL, apiKey: testKey)
            let directory = try TemporaryDirectory()
            do {
                let transcript = try await Self.chorus(provider, cache: directory).transcribe(Self.request)
                #expect(failure == nil, "\(name), \(label): succeeded")
                #expect(
                    !transcript.words.isEmpty && transcript.words.allSatisfy { !$0.word.isEmpty && $0.end <= Self.request.duration },
                    "\(name), \(label)")
                if label == "text, no words" { #expect(transcript.words.map(\.word) == ["Practice", "moved", "to", "four", "thirty"]) }
            } catch let error as VoiceError {
                #expect(error.kind == failure && error.provider == name, "\(name), \(label): \(error)")
                #expect("\(error)".contains("a word without a valid start and end"), "\(name), \(label): \(error)")
            }
            #expect(server.requests.count == 1, "\(name), \(label): \(server.requests.count) requests")
        }
        // The rule itself, without the onsets' refinement on the audio: spelled without spaces or line ends, an empty
        // word left out, an end past the audio clipped to it.
        let items: [[String: Any]] = [
            [key: " Hello\n", "start": 0.5, "end": 0.9], [key: "\n", "start": 1, "end": 1], [key: "there", "start": 1, "end": 9],
        ]
        let words = try HostedTranscript.words(items, key: key, provider: name, duration: 2)
        #expect(words == [WordTiming(word: "Hello", start: 0.5, end: 0.9), WordTiming(word: "there", start: 1, end: 2)])
    }

    /// The fault matrix: what the stub does on each call (`nil`: answer well), and what the caller then sees. Made per
    /// test, not a stored global: LeakSanitizer does not see `Data` held in a global array of tuples as reachable.
    static func faults() -> [(name: String, answers: [StubServer.Response?], requests: Int, failure: VoiceError.Kind?)] {
        [
            (
                "429 with Retry-After: 0, twice",
                [
                    .json(429, ["error": ["message": "slow down"]], headers: ["Retry-After": "0"]),
                    .json(429, ["error": ["message": "slow down"]], headers: ["Retry-After": "0"]), nil,
                ], 3, nil
            ),
            (
                "429 without Retry-After",
                [.json(429, ["detail": ["status": "too_many_concurrent_requests", "message": "wait"], "error": ["message": "wait"]]), nil], 2, nil
            ),
            ("500, then a good answer", [.json(500, ["error": ["message": "oops"]]), nil], 2, nil),
            ("a hang past the timeout", [StubServer.Response(status: 200, body: Data("{}".utf8), delay: 30), nil], 2, nil),
            (
                "the connection cut mid-body",
                [
                    StubServer.Response(
                        status: 200, headers: ["Content-Type": "application/json"],
                        body: Data(#"{"text": "Hello there", "words": []}"#.utf8), truncateBody: 5), nil,
                ], 2, nil
            ),
            ("503 for good", Array(repeating: .json(503, ["error": ["message": "down"]]), count: 4), 4, .unavailable),
            (
                "401: not retried, the key never shown",
                [
                    .json(
                        401,
                        [
                            "error": ["message": "Incorrect API key provided: \(testKey)"],
                            "detail": ["status": "invalid_api_key", "message": "bad key \(testKey)"],
                        ])
                ], 1, .authentication
            ),
            (
                "200 with an HTML page: not retried",
                [StubServer.Response(status: 200, headers: ["Content-Type": "text/html"], body: Data("<html>maintenance</html>".utf8))],
                1, .invalidResponse
            ),
        ]
    }

    @Test(
        "faults: 429 ± Retry-After, 5xx, a hang and a cut connection are retried; 401 and a 200 that is not JSON are not",
        arguments: ["openai", "elevenlabs"])
    func faultMatrix(provider name: String) async throws {
        for fault in Self.faults() {
            let calls = CallCount()
            let answers = fault.answers
            let server = try StubServer { request in
                calls.increment()
                let index = min(calls.value - 1, answers.count - 1)
                if let answer = answers[index] { return answer }
                return name == "openai"
                    ? .json(
                        200,
                        [
                            "text": "Hello there", "language": "english",
                            "words": [["word": "Hello", "start": 0.5, "end": 0.9], ["word": "there", "start": 0.95, "end": 1.4]],
                        ])
                    : .json(
                        200,
                        [
                            "text": "Hello there", "language_code": "eng",
                            "words": [
                                ["text": "Hello", "start": 0.5, "end": 0.9, "type": "word"],
                                ["text": "there", "start": 0.95, "end": 1.4, "type": "word"],
                            ],
                        ])
            }
            defer { server.stop() }
            let provider: any SpeechToTextProvider =
                name == "openai"
                ? OpenAISpeechToText(baseURL: server.baseURL, apiKey: testKey, timeoutSeconds: 1)
                : ElevenLabsSpeechToText(baseURL: server.baseURL, apiKey: testKey, timeoutSeconds: 1)
            let directory = try TemporaryDirectory()
            let chorus = try Self.chorus(provider, cache: directory)
            do {
                let transcript = try await chorus.transcribe(Self.request)
                #expect(fault.failure == nil, "\(name), \(fault.name): succeeded, expected \(String(describing: fault.failure))")
                #expect(transcript.words.map(\.word) == ["Hello", "there"], "\(name), \(fault.name)")
            } catch let error as VoiceError {
                #expect(error.kind == fault.failure, "\(name), \(fault.name): \(error)")
                #expect(error.provider == name && !"\(error)".contains(testKey), "\(name), \(fault.name): \(error)")
            }
            #expect(server.requests.count == fault.requests, "\(name), \(fault.name): \(server.requests.count) requests")
        }
    }

    @Test("a render's recorded message is heard by a remote provider too: its words, marked transcribed")
    func renderWithRemoteProvider() async throws {
        let server = try StubServer { _ in
            .json(
                200,
                [
                    "text": "Hello there.", "language": "english",
                    "words": [["word": "Hello", "start": 0.0, "end": 0.4], ["word": "there", "start": 0.45, "end": 0.9]],
                ])
        }
        let directory = try TemporaryDirectory()
        let format = AudioFormat(sampleRate: 16_000, channels: 1)
        try ClipEncoding.wav16.write(AudioBuffer(format: format, samples: Self.request.samples), to: directory.file("note.wav"))
        let chorus = try Self.chorus(OpenAISpeechToText(baseURL: server.baseURL, apiKey: testKey), cache: directory)
        let result = try await chorus.render(
            Conversation(messages: [.init(speaker: "A", audio: .file(directory.file("note.wav"), label: "note.wav"))]),
            to: RenderOutputs(format: .wav)
        ).result()
        let segment = result.timeline.segments[0]
        #expect(segment.transcribed == true && segment.text == "Hello there." && segment.words?.map(\.word) == ["Hello", "there"])
        #expect(server.requests.count == 1)
    }
}

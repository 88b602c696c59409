import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusInference
@testable import ChorusListening
@testable import ChorusService

/// `POST /v1/audio/transcriptions` and `/v1/audio/alignments` with the offline model set-up installs, on the
/// repository's recorded sample clips (espeak-ng speech in phone formats, their texts in scripts/make-samples.sh).
@Suite("Service: transcription and alignment")
struct TranscriptionRouteTests {
    static let marcus = Repository.file("samples/clips/marcus-1.m4a")
    static let marcusText = "I can get her. I'm leaving work at four anyway."

    /// A service that transcribes with the set-up model (from `folder`, by default the models folder set-up filled).
    static func service(folder: URL = ModelFolder.root(), edit: @escaping (inout ServiceConfiguration) -> Void = { _ in }) throws
        -> TestService
    {
        try TestService { configuration in
            configuration.transcriptionModel = WhisperModel.defaultName
            configuration.environment["CHORUS_MODELS_DIR"] = folder.path
            edit(&configuration)
        }
    }

    static func post(_ client: some TestClientProtocol, _ request: TranscriptionRequest, to path: String = "/v1/audio/transcriptions") async throws
        -> TestResponse
    {
        let (body, type) = request.form()
        return try await client.call(.post, path, body: body, headers: [.contentType: type])
    }

    static func words(_ text: String) -> [String] {
        text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "'" }).map(String.init)
    }

    @Test("an M4A voice note as OpenAI's SDKs send it: json, text, verbose_json with the granularities asked for, captions")
    func transcriptions() async throws {
        let audio = try Data(contentsOf: Self.marcus)
        let duration = try AudioProbe.probe(Self.marcus).duration
        try await Self.service().test { client in
            let json = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: "note.m4a")))
            #expect(json.status == .ok && json.headers[.contentType] == "application/json", "\(json.text)")
            let text = try #require(try JSONSerialization.jsonObject(with: json.data) as? [String: String])["text"] ?? ""
            #expect(Self.words(text).starts(with: ["i", "can", "get", "her"]), "\(text)")
            // tiny.en: "…leaving where kept for a minute"
            #expect(Self.words(text).starts(with: ["i", "can", "get", "her", "i'm", "leaving"]), "\(text)")

            let plain = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil), format: .text))
            #expect(plain.text == text + "\n" && plain.headers[.contentType] == "text/plain; charset=utf-8")

            let words = try await Self.post(
                client, TranscriptionRequest(audio: .file(audio, filename: nil), format: .verboseJSON, granularities: [.word]))
            let verbose = try words.decode(Transcription.self)
            #expect(verbose.text == text && verbose.language == "english" && abs(verbose.duration - duration) < 0.01)
            #expect(verbose.segments == nil)
            let timed = try #require(verbose.words)
            #expect(
                timed.count >= 8 && timed.map(\.start) == timed.map(\.start).sorted()
                    && timed.allSatisfy { $0.start >= 0 && $0.end <= duration + 0.05 })
            let segments = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil), format: .verboseJSON))
            #expect(try segments.decode(Transcription.self).words == nil && (try segments.decode(Transcription.self)).segments?.isEmpty == false)

            let vtt = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil), format: .vtt))
            #expect(vtt.text.hasPrefix("WEBVTT\n\n1\n00:00:0") && vtt.headers[.contentType] == "text/vtt; charset=utf-8", "\(vtt.text)")

            // An uploaded clip by id, and the model by its own name.
            let clip = try await client.call(.post, "/v1/clips", body: audio)
            let id = try clip.decode(ClipInfo.self).id
            let byID = try await Self.post(client, TranscriptionRequest(audio: .clip(id), model: WhisperModel.defaultName, language: "en"))
            #expect(byID.status == .ok && byID.text == json.text, "\(byID.text)")

            let health = try await client.call(.get, "/health").decode(HealthResponse.self)
            #expect(health.transcription == TranscriptionHealth(status: "ready", model: WhisperModel.defaultName))
        }
    }

    @Test("the same audio again is answered from the transcript cache (unless Cache-Control: no-cache), keyed by its bytes and the model")
    func cached() async throws {
        let audio = try Data(contentsOf: Self.marcus)
        let service = try Self.service()
        try await service.test { client in
            let first = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil)))
            #expect(first.status == .ok)
            let folder = service.configuration.dataDirectory.appendingPathComponent("cache/transcripts/v1")
            let stored = try #require(
                FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.allObjects
                    .compactMap { $0 as? URL }.filter { $0.pathExtension == "json" }.first, "no transcript stored")
            // A stored transcript altered on disk is what the next request gets: it came from the cache, not the model.
            var transcript = try JSONDecoder().decode(Transcript.self, from: Data(contentsOf: stored))
            transcript.text = "From the cache."
            try JSONEncoder().encode(transcript).write(to: stored)
            let again = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil)))
            #expect(again.text == #"{"text":"From the cache."}"# + "\n", "\(again.text)")
            let (body, type) = TranscriptionRequest(audio: .file(audio, filename: nil)).form()
            let fresh = try await client.call(
                .post, "/v1/audio/transcriptions", body: body, headers: [.contentType: type, .cacheControl: "no-cache"])
            #expect(fresh.text == first.text)
            // Other bytes (the same speech in another container) are another entry.
            let other = try await Self.post(
                client, TranscriptionRequest(audio: .file(try Data(contentsOf: Repository.file("samples/clips/dad-1.ogg")), filename: nil)))
            #expect(other.status == .ok && other.text != first.text)
            let count = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.allObjects.compactMap { $0 as? URL }.filter {
                $0.pathExtension == "json"
            }.count
            #expect(count == 2)
        }
    }

    @Test("an alignment times every word of the given text, spelled as written, in order, and its sentences")
    func alignment() async throws {
        let audio = try Data(contentsOf: Self.marcus)
        let duration = try AudioProbe.probe(Self.marcus).duration
        try await Self.service().test { client in
            let response = try await Self.post(
                client,
                TranscriptionRequest(
                    audio: .file(audio, filename: nil), format: .verboseJSON, granularities: [.word, .segment],
                    text: Self.marcusText), to: "/v1/audio/alignments")
            #expect(response.status == .ok, "\(response.text)")
            let aligned = try response.decode(Transcription.self)
            let words = try #require(aligned.words)
            #expect(words.map(\.word) == ["I", "can", "get", "her", "I'm", "leaving", "work", "at", "four", "anyway"])
            #expect(zip(words, words.dropFirst()).allSatisfy { $0.start < $1.start && $0.end <= $1.start + 1e-9 })
            #expect(words.allSatisfy { $0.start >= 0 && $0.end <= duration + 0.01 && $0.end > $0.start }, "\(words)")
            #expect(aligned.text == Self.marcusText && aligned.segments?.map(\.text) == ["I can get her.", "I'm leaving work at four anyway."])
            let missing = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil)), to: "/v1/audio/alignments")
            #expect(try missing.status == .badRequest && (try missing.decode(ErrorBody.self)).error.field == "text")
        }
    }

    @Test("bad requests are 400 naming the part, too long or too large 413, an unknown clip 422; nothing crashes")
    func refused() async throws {
        let audio = try Data(contentsOf: Self.marcus)
        try await Self.service(edit: {
            $0.maxClipSeconds = 2
            $0.maxBodyBytes = 64 * 1024
        }).test { client in
            func refused(_ response: TestResponse, _ status: HTTPResponse.Status, field: String?, _ fragment: String) {
                let error = try? response.decode(ErrorBody.self)
                #expect(
                    response.status == status && error?.error.field == field && error?.error.message.contains(fragment) == true,
                    "\(response.status): \(response.text)")
            }
            let file = TranscriptionRequest.Audio.file(audio, filename: "note.m4a")
            refused(
                try await client.call(.post, "/v1/audio/transcriptions", json: #"{"file": "x"}"#), .badRequest, field: "body",
                "not multipart/form-data")
            var writer = MultipartForm.Writer(boundary: "b")
            writer.add("model", "whisper-1")
            refused(
                try await client.call(
                    .post, "/v1/audio/transcriptions", body: writer.finished(), headers: [.contentType: "multipart/form-data; boundary=b"]),
                .badRequest, field: "file", "no audio")
            refused(
                try await client.call(
                    .post, "/v1/audio/transcriptions", body: Data("--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc".utf8),
                    headers: [.contentType: "multipart/form-data; boundary=b"]), .badRequest, field: "body", "truncated")
            refused(
                try await Self.post(client, TranscriptionRequest(audio: .file(Data("not audio, a text file\n".utf8), filename: "a.m4a"))),
                .badRequest, field: "file", "file:")
            refused(
                try await Self.post(client, TranscriptionRequest(audio: file, model: "whisper-large-v9")), .badRequest, field: "model", "whisper-1")
            refused(
                try await Self.post(client, TranscriptionRequest(audio: file, model: WhisperModel.defaultName, language: "fr")), .badRequest,
                field: "language", "English-only")
            refused(
                try await Self.post(client, TranscriptionRequest(audio: file, model: "whisper-base", language: "xx")), .badRequest, field: "language",
                "does not transcribe \"xx\"")
            for (name, value, fragment) in [
                ("response_format", "mp3", "is not one of"), ("timestamp_granularities[]", "word", "only with response_format verbose_json"),
                ("temperature", "hot", "not a number"), ("language", "english!", "ISO-639-1"),
            ] {
                var form = MultipartForm.Writer(boundary: "c")
                form.add("file", data: audio, filename: "a.m4a", contentType: "audio/mp4")
                form.add("model", "whisper-1")
                form.add(name, value)
                refused(
                    try await client.call(
                        .post, "/v1/audio/transcriptions", body: form.finished(), headers: [.contentType: "multipart/form-data; boundary=c"]),
                    .badRequest, field: name, fragment)
            }
            refused(
                try await Self.post(client, TranscriptionRequest(audio: .clip("0123456789abcdef0123456789abcdef"))), .unprocessableContent,
                field: "clip", "no uploaded clip")
            refused(try await Self.post(client, TranscriptionRequest(audio: file)), .contentTooLarge, field: "file", "longer than 2 s")
            let big = TranscriptionRequest(audio: .file(Data(repeating: 7, count: 70 * 1024), filename: nil))
            refused(try await Self.post(client, big), .contentTooLarge, field: nil, "limit")
        }
    }

    @Test(
        "no model, or a model file deleted while the service runs: transcription is 503 naming the file (never a server path), /health says why, the rest serves"
    )
    func unavailable() async throws {
        let audio = try Data(contentsOf: Self.marcus)
        let empty = try TemporaryDirectory(prefix: "chorus-models")
        let none = try Self.service(folder: empty.url)
        try await none.test { client in
            let response = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil)))
            // Asked again with the folder as it was, the answer comes without another attempt to load.
            let again = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil)))
            #expect(again.status == .serviceUnavailable && again.text == response.text)
            #expect(none.logs.lines.filter { $0.contains("transcription unavailable") }.count == 1, "\(none.logs.text)")
            #expect(response.status == .serviceUnavailable && response.errorCode == "transcription_unavailable", "\(response.text)")
            #expect(response.headers[.retryAfter] != nil && !response.text.contains(empty.url.path), "\(response.text)")
            let health = try await client.call(.get, "/health").decode(HealthResponse.self)
            #expect(health.status == "ok" && health.transcription?.status == "unavailable", "\(health)")
            #expect(
                health.transcription?.reason?.contains(WhisperModel.defaultName) == true
                    && health.transcription?.reason?.contains(empty.url.path) == false,
                "\(health)")
            #expect(try await client.call(.get, "/v1/voices").status == .ok)
        }

        // A model folder of its own (the large files linked, the token table copied): its token table deleted after the
        // model loaded, then put back.
        let models = try TemporaryDirectory(prefix: "chorus-models")
        let original = ModelFolder.root().appendingPathComponent(WhisperModel.defaultName)
        let copy = models.file(WhisperModel.defaultName)
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: original.path) {
            if name.hasSuffix(".onnx") {
                try FileManager.default.linkItem(at: original.appendingPathComponent(name), to: copy.appendingPathComponent(name))
            } else {
                try FileManager.default.copyItem(at: original.appendingPathComponent(name), to: copy.appendingPathComponent(name))
            }
        }
        let tokens = copy.appendingPathComponent("tokens.txt")
        let table = try Data(contentsOf: tokens)
        try await Self.service(folder: models.url).test { client in
            #expect(try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil))).status == .ok)
            try FileManager.default.removeItem(at: tokens)
            let broken = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil)))
            #expect(
                broken.status == .serviceUnavailable && broken.text.contains("tokens") && !broken.text.contains(models.url.path), "\(broken.text)")
            #expect(try await client.call(.get, "/health").decode(HealthResponse.self).transcription?.status == "unavailable")
            try table.write(to: tokens)
            let mended = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil)))
            #expect(mended.status == .ok, "\(mended.text)")
        }
    }

    @Test("languages: whisper-1 hears English with tiny.en and a voice note said to be Spanish with whisper-base; whisper-base by name detects it")
    func languages() async throws {
        let spanish = try #require(try HumanSpeech.clips(language: "es").first)
        let french = try #require(try HumanSpeech.clips(language: "fr").first)
        try await Self.service().test { client in
            func verbose(_ clip: HumanSpeech.Clip, model: String, language: String?) async throws -> (Transcription, TestResponse) {
                let response = try await Self.post(
                    client,
                    TranscriptionRequest(
                        audio: .file(try Data(contentsOf: clip.url), filename: nil), model: model,
                        language: language, format: .verboseJSON))
                #expect(response.status == .ok, "\(response.text)")
                return (try response.decode(Transcription.self), response)
            }
            let (said, _) = try await verbose(spanish, model: "whisper-1", language: "es")
            #expect(said.language == "spanish" && HumanSpeech.errors(said.text, spanish.text).wrong <= 2, "\(said.text)")
            let (detected, _) = try await verbose(french, model: "whisper-base", language: nil)
            #expect(detected.language == "french" && HumanSpeech.errors(detected.text, french.text).wrong <= 2, "\(detected.text)")
            let (english, _) = try await verbose(
                try #require(try HumanSpeech.clips(language: "en").first { $0.id.contains("jfk") }), model: "whisper-1", language: nil)
            #expect(english.language == "english" && english.text.lowercased().contains("ask not"), "\(english.text)")
            let health = try await client.call(.get, "/health").decode(HealthResponse.self)
            #expect(health.transcription?.status == "ready" && health.transcription?.model == WhisperModel.defaultName)
        }
        #expect(
            WhisperModel.model(for: nil) == WhisperModel.defaultName && WhisperModel.model(for: "en") == WhisperModel.defaultName
                && WhisperModel.model(for: "English") == WhisperModel.defaultName)
        #expect(WhisperModel.model(for: "es") == "whisper-base" && WhisperModel.model(for: "spanish") == "whisper-base")
        #expect(
            WhisperModel.model(for: "es", defaultModel: "whisper-base") == "whisper-base"
                && WhisperModel.model(for: "fr", defaultModel: "my-model") == "my-model")
    }

    @Test("at most the queue's limit of transcriptions wait or run; the next is 503 with Retry-After, and the queue frees as they end")
    func bounded() async throws {
        let recognition = SpeechRecognition(
            folder: URL(fileURLWithPath: "/nonexistent"), modelName: nil, threads: 1, limit: 2,
            logger: .init(label: "test"))
        let gates = (0..<2).map { _ in AsyncStream<Void>.makeStream() }
        let running = gates.map { gate in
            Task {
                try await recognition.admitted {
                    for await _ in gate.stream { break }
                    return 1
                }
            }
        }
        // Both admitted before a third arrives: wait until the queue is full.
        var refused: ServiceError?
        for _ in 0..<200 where refused == nil {
            do {
                _ = try await recognition.admitted { 0 }
                try await Task.sleep(nanoseconds: 5_000_000)
            } catch let error as ServiceError {
                refused = error
            }
        }
        #expect(refused?.status == .serviceUnavailable && refused?.body.error.code == "overloaded" && refused?.headers[.retryAfter] != nil)
        for gate in gates { gate.continuation.finish() }
        for task in running { #expect(try await task.value == 1) }
        #expect(try await recognition.admitted { 3 } == 3)
    }

    @Test(
        "the official OpenAI Python SDK, pointed at Chorus, transcribes in json, verbose_json with words and vtt, reads 400s, and speaks (with a lexicon in extra_body)"
    )
    func openAISDK() async throws {
        try await Self.service().test(.live) { client in
            let port = try #require(client.port)
            let run = try await ToolRun.run([
                "python3", Repository.supportScript("openai_sdk_check.py").path, "http://127.0.0.1:\(port)/v1", serviceKey,
                Self.marcus.path,
            ])
            try #require(run.status == 0, "the SDK check failed (scripts/setup.sh --test installs the SDK): \(run.errors.suffix(1500))")
            let result = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
            let text = result["json"] as? String ?? ""
            #expect(Self.words(text).starts(with: ["i", "can", "get", "her"]), "\(text)")
            let verbose = try #require(result["verbose"] as? [String: Any])
            #expect(verbose["text"] as? String == text && verbose["language"] as? String == "english")
            let words = try #require(verbose["words"] as? [[String: Any]])
            #expect(words.count >= 8 && (verbose["segments"] as? [Any])?.isEmpty == false, "\(verbose)")
            #expect((result["vtt"] as? String)?.hasPrefix("WEBVTT") == true)
            let refused = try #require(result["not_audio"] as? [String: Any], "the SDK accepted text as audio")
            #expect(refused["status"] as? Int == 400 && (refused["message"] as? String)?.contains("file") == true, "\(refused)")
            #expect(result["speech_bytes"] as? Int ?? 0 > 24_000)
            // extra_body's lexicon reaches the voice: over 0.3 s longer (16-bit at 24 kHz).
            let plain = result["bob_plain"] as? Int ?? 0
            let withLexicon = result["bob_lexicon"] as? Int ?? 0
            #expect(plain > 0 && withLexicon - plain > 14_400, "\(plain) vs \(withLexicon) bytes")
        }
    }

    @Test(
        "renders: a recorded clip without text gets the words the service hears, one with text its text aligned; \"transcribe\": false neither (another render)"
    )
    func renders() async throws {
        let audio = try Data(contentsOf: Self.marcus).base64EncodedString()
        try await Self.service().test { client in
            let heard = try await client.call(
                .post, "/v1/renders",
                json: #"""
                    {"messages": [{"speaker": "Marcus", "audio_base64": "\#(audio)"}, {"speaker": "Marcus", "audio_base64": "\#(audio)", "text": "\#(Self.marcusText)"}],
                     "output": {"format": "wav"}}
                    """#)
            #expect(heard.status == .created, "\(heard.text)")
            let manifest = try heard.decode(RenderManifest.self)
            let segments = try #require(manifest.timeline?.segments)
            #expect(segments[0].transcribed == true && Self.words(segments[0].text ?? "").starts(with: ["i", "can", "get", "her"]), "\(segments[0])")
            let words = try #require(segments[0].words)
            #expect(words.count >= 8 && words.allSatisfy { $0.start >= segments[0].start && $0.end <= segments[0].end })
            #expect(segments[1].transcribed == nil && segments[1].text == Self.marcusText)
            #expect(
                segments[1].words?.map(\.word) == ["I", "can", "get", "her", "I'm", "leaving", "work", "at", "four", "anyway"],
                "\(segments[1].words ?? [])")
            // The captions the service stores say what was heard.
            let captions = try await client.call(.get, "/v1/renders/\(manifest.id)/captions.vtt")
            #expect(captions.status == .ok && captions.text.contains(segments[0].text ?? "?"), "\(captions.text)")

            let declined = try await client.call(
                .post, "/v1/renders",
                json: #"""
                    {"transcribe": false, "messages": [{"speaker": "Marcus", "audio_base64": "\#(audio)"}, {"speaker": "Marcus", "audio_base64": "\#(audio)", "text": "\#(Self.marcusText)"}],
                     "output": {"format": "wav"}}
                    """#)
            #expect(declined.status == .created, "\(declined.text)")
            let plain = try declined.decode(RenderManifest.self)
            #expect(plain.id != manifest.id, "what is heard is part of a render's identity")
            #expect(plain.timeline?.segments.allSatisfy { $0.words == nil && $0.transcribed == nil } == true)
            #expect(plain.timeline?.segments.map(\.text) == [nil, Self.marcusText])
        }
    }

    @Test(
        "model names go to providers by configuration: whisper-1 set to OpenAI asks its wire (a stub) through the policies and the cache; a provider without its key is 409; /health lists each name"
    )
    func routedToProviders() async throws {
        let stub = try StubServer { request in
            guard request.headers["authorization"] == "Bearer \(providerKey)" else { return .json(401, ["error": ["message": "Incorrect API key"]]) }
            return .json(
                200,
                [
                    "task": "transcribe", "language": "english", "duration": 2.6, "text": " I can get her. ",
                    "words": [
                        ["word": "I", "start": 0.3, "end": 0.4], ["word": "can", "start": 0.45, "end": 0.7],
                        ["word": "get", "start": 0.75, "end": 0.95], ["word": "her", "start": 1.0, "end": 1.3],
                    ],
                ])
        }
        let audio = try Data(contentsOf: Self.marcus)
        // The offline model is off: what answers whisper-1 here is OpenAI alone.
        let service = try TestService { configuration in
            configuration.environment = ["OPENAI_BASE_URL": stub.baseURL + "/v1", "OPENAI_API_KEY": providerKey]
            configuration.transcriptionModels["whisper-1"] = .init(provider: "openai")
            configuration.transcriptionModels["scribe"] = .init(provider: "elevenlabs", model: "scribe_v1")
        }
        try await service.test { client in
            let answer = try await Self.post(
                client,
                TranscriptionRequest(
                    audio: .file(audio, filename: "note.m4a"), language: "en",
                    format: .verboseJSON, granularities: [.word]))
            #expect(answer.status == .ok, "\(answer.text)")
            let heard = try answer.decode(Transcription.self)
            #expect(heard.text == "I can get her." && heard.words?.map(\.word) == ["I", "can", "get", "her"])
            let sent = try #require(stub.requests.first)
            let type = try #require(sent.headers["content-type"])
            let form = try MultipartForm(body: sent.body, boundary: try MultipartForm.boundary(of: type))
            let (model, language) = (try form.text("model"), try form.text("language"))
            #expect(sent.path == "/v1/audio/transcriptions" && model == "whisper-1" && language == "en")
            // The same audio again: the transcript cache; with no-cache, the provider again.
            _ = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil), language: "en"))
            #expect(stub.requests.count == 1)
            let (body, type2) = TranscriptionRequest(audio: .file(audio, filename: nil), language: "en").form()
            let fresh = try await client.call(
                .post, "/v1/audio/transcriptions", body: body, headers: [.contentType: type2, .cacheControl: "no-cache"])
            #expect(fresh.status == .ok && stub.requests.count == 2)

            let unkeyed = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil), model: "scribe"))
            #expect(
                unkeyed.status == .conflict && unkeyed.text.contains("provider_not_configured") && unkeyed.text.contains("elevenlabs"),
                "\(unkeyed.text)")
            #expect(!unkeyed.text.contains(providerKey))
            let unknown = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil), model: "whisper-9"))
            #expect(unknown.status == .badRequest && unknown.text.contains("gpt-4o-transcribe") && unknown.text.contains("scribe"), "\(unknown.text)")
            let offline = try await Self.post(client, TranscriptionRequest(audio: .file(audio, filename: nil), model: "gpt-4o-transcribe"))
            #expect(offline.status == .serviceUnavailable && offline.text.contains("transcription_unavailable"), "\(offline.text)")

            let health = try await client.call(.get, "/health")
            #expect(!health.text.contains(providerKey))
            let models = try #require(try health.decode(HealthResponse.self).transcriptionModels)
            #expect(models["whisper-1"] == TranscriptionHealth(status: "ready", model: "openai"))
            #expect(models["scribe"]?.status == "unavailable" && models["scribe"]?.model == "elevenlabs:scribe_v1")
            #expect(models["gpt-4o-transcribe"] == TranscriptionHealth(status: "off"))
        }
    }

    @Test(
        "CHORUS_TRANSCRIPTION_MODELS: NAME=PROVIDER[:MODEL] over the defaults, NAME=off takes one away; unknown providers and bad entries are refused"
    )
    func routesConfiguration() throws {
        let configuration = try ServiceConfiguration(environment: [
            "CHORUS_TRANSCRIPTION_MODELS": "whisper-1=openai, scribe=elevenlabs:scribe_v1,gpt-4o-mini-transcribe=off"
        ])
        #expect(
            configuration.transcriptionModels == [
                "whisper-1": .init(provider: "openai"), "scribe": .init(provider: "elevenlabs", model: "scribe_v1"),
                "gpt-4o-transcribe": .offline,
            ])
        try configuration.validate()
        for bad in ["whisper-1", "=openai", "a=openai:", "a b=openai"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try ServiceConfiguration(environment: ["CHORUS_TRANSCRIPTION_MODELS": bad]) }
        }
        // whisper:MODEL names a model folder (whisper-base answering whisper-1, say); one that cannot be a folder's name is refused.
        try ServiceConfiguration(environment: ["CHORUS_TRANSCRIPTION_MODELS": "whisper-1=whisper:whisper-base"]).validate()
        for refused in ["x=acme", "x=whisper:../models", "x=whisper:off"] {
            #expect(throws: ConfigurationError.self, "\(refused)") {
                try ServiceConfiguration(environment: ["CHORUS_TRANSCRIPTION_MODELS": refused]).validate()
            }
        }
    }

    @Test("CHORUS_TRANSCRIPTION_MODEL names a model folder or turns transcription off; a path is refused")
    func configuration() throws {
        #expect(try ServiceConfiguration(environment: [:]).transcriptionModel == WhisperModel.defaultName)
        #expect(try ServiceConfiguration(environment: ["CHORUS_TRANSCRIPTION_MODEL": "off"]).transcriptionModel == nil)
        #expect(try ServiceConfiguration(environment: ["CHORUS_TRANSCRIPTION_MODEL": "whisper-base.en"]).transcriptionModel == "whisper-base.en")
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration(environment: ["CHORUS_TRANSCRIPTION_MODEL": "../../etc"]) }
    }
}

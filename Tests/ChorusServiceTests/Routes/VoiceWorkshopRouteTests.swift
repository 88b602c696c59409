import ChorusAudio
import ChorusFixtures
import ChorusSpeech
import ChorusSpeechTestSupport
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusService

/// ElevenLabs' voice-cloning shape served offline: a Kokoro voice made from uploaded real recordings (an audiobook
/// reader's two sentences, a tiny search budget), followed as a job, listed and usable for the key that made it only,
/// removed; bad uploads refused by field, a creation that fails says why, a full queue is 503.
@Suite("Service: voices made from uploaded recordings (POST /v1/voices/add)")
struct VoiceWorkshopRouteTests {
    static let otherKey = "second-key-for-made-voices"

    static func form(name: String?, files: [(String, Data)], fields: [String: String] = [:]) -> (Data, HTTPFields) {
        var writer = MultipartForm.Writer(boundary: "voice")
        if let name { writer.add("name", name) }
        for (file, data) in files { writer.add("files", data: data, filename: file, contentType: "audio/wav") }
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) { writer.add(key, value) }
        return (writer.finished(), [.contentType: "multipart/form-data; boundary=voice"])
    }

    static func reader() throws -> [(String, Data)] {
        let clips = try HumanSpeech.clips(language: "en")
        return try ["pocketsphinx/librivox-0890", "pocketsphinx/librivox-0920"].map { id in
            let clip = try #require(clips.first { $0.id == id })
            return (clip.url.lastPathComponent, try Data(contentsOf: clip.url))
        }
    }

    /// Polls job `path` until it has ended.
    static func ended(_ client: any TestClientProtocol, _ path: String, key: String = serviceKey) async throws -> VoiceJob {
        for _ in 0..<300 {
            let job = try await client.call(.get, path, key: key).decode(VoiceJob.self)
            if !["queued", "making"].contains(job.status) { return job }
            try await Task.sleep(for: .seconds(1))  // within the key's rate limit
        }
        throw UndecodableResponse(status: 0, expected: "the job to end in 5 minutes", body: path)
    }

    @Test("a voice made from uploads is listed and usable for its key only, then removed; the recordings are not kept")
    func madeForItsKey() async throws {
        let models = try PrivateModels()
        let service = try TestService {
            $0.apiKeys = [serviceKey, Self.otherKey]
            $0.environment = ["CHORUS_MODELS_DIR": models.root.path]
            $0.registry = VoiceRegistry(providers: [KokoroProvider(folder: models.kokoro), EspeakProvider()])
        }
        let uploads = service.configuration.dataDirectory.appendingPathComponent("voice-uploads")
        try await service.test { client in
            let (body, headers) = Self.form(
                name: "Reader's voice", files: try Self.reader(), fields: ["labels": #"{"gender": "male"}"#, "candidates": "4"])
            let added = try await client.call(.post, "/v1/voices/add", body: body, headers: headers)
            #expect(added.status == .ok, "\(added.text)")
            let response = try added.decode(VoiceAddResponse.self)
            #expect(response.voiceID.hasPrefix("kokoro:m") && response.voiceID.hasSuffix("_reader_s_voice") && !response.requiresVerification)
            // Its events, as a render's: progress as it changes, then `ready`, and the stream ends.
            let jobID = String(response.job.split(separator: "/").last ?? "")
            let stream = try await client.call(.get, ServicePaths.voiceJobEvents(jobID))
            #expect(stream.status == .ok && stream.headers[.contentType] == "text/event-stream", "\(stream.text)")
            let events = stream.text.components(separatedBy: "\n\n").filter { !$0.isEmpty }.map { event in
                (
                    name: event.split(separator: "\n").first { $0.hasPrefix("event: ") }?.dropFirst(7) ?? "",
                    job: event.split(separator: "\n").first { $0.hasPrefix("data: ") }.flatMap {
                        try? JSONDecoder().decode(VoiceJob.self, from: Data($0.dropFirst(6).utf8))
                    }
                )
            }
            #expect(events.first?.name == "progress" && events.last?.name == "ready" && events.last?.job?.progress == 1, "\(stream.text.suffix(600))")
            #expect(events.dropLast().allSatisfy { $0.name == "progress" && $0.job?.voiceID == response.voiceID })
            let job = try await Self.ended(client, response.job)
            #expect(job.status == "ready" && job.progress == 1 && job.error == nil, "\(job)")
            // The other key cannot follow the job.
            #expect(try await client.call(.get, response.job, key: Self.otherKey).status == .notFound)
            #expect(try await client.call(.get, ServicePaths.voiceJobEvents(jobID), key: Self.otherKey).status == .notFound)
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: uploads.path)) ?? ["?"]).isEmpty)

            let mine = try await client.call(.get, "/v1/voices").decode(VoiceList.self)
            let made = try #require(mine.voices.first { $0.id == response.voiceID })
            #expect(made.voiceID == response.voiceID && made.category == "cloned" && made.gender == "male")
            #expect(made.made?.madeBy == "chorus" && made.made?.recordings == 2 && made.made?.people == 1)
            #expect(mine.voices.first { $0.id == "kokoro:jm_kumo" }?.category == "premade")
            // Chorus's own English voices are made too, aimed at several people: "generated", with what they were made from.
            let linden = mine.voices.first { $0.id == "kokoro:af_linden" }
            #expect(
                linden?.category == "generated" && (linden?.made?.people ?? 0) >= 2 && linden?.gender == "female", "\(String(describing: linden))")
            let theirs = try await client.call(.get, "/v1/voices", key: Self.otherKey).decode(VoiceList.self)
            #expect(!theirs.voices.contains { $0.id == response.voiceID } && theirs.voices.contains { $0.id == "kokoro:jm_kumo" })

            let render = textRequest(["Dinner is at seven."], voice: response.voiceID)
            let spoken = try await client.call(.post, "/v1/renders", json: render)
            #expect(spoken.status == .created, "\(spoken.text)")
            // The timeline says the voice was made, and from what.
            let timeline = try #require(try spoken.decode(RenderManifest.self).timeline)
            #expect(timeline.segments.first?.voice == response.voiceID)
            #expect(
                timeline.madeVoices?[response.voiceID]?.recordings == 2 && timeline.madeVoices?[response.voiceID]?.madeBy == "chorus",
                "\(spoken.text.suffix(600))")
            let refused = try await client.call(.post, "/v1/renders", json: render, key: Self.otherKey)
            #expect(refused.status == .unprocessableContent && refused.errorCode == "unknown_voice", "\(refused.text)")
            #expect(try await client.call(.delete, "/v1/voices/\(response.voiceID)", key: Self.otherKey).status == .notFound)
            #expect(try await client.call(.delete, "/v1/voices/kokoro:jm_kumo").status == .unprocessableContent)

            #expect(try await client.call(.delete, "/v1/voices/\(response.voiceID)").status == .noContent)
            let after = try await client.call(.get, "/v1/voices").decode(VoiceList.self)
            #expect(!after.voices.contains { $0.id == response.voiceID })
            #expect(!models.voiceFiles.contains { $0.hasPrefix(String(response.voiceID.dropFirst("kokoro:".count))) })
        }
    }

    @Test("bad uploads are refused by field; a creation from silence fails saying why and leaves nothing; a full queue is 503")
    func refused() async throws {
        let models = try PrivateModels()
        let before = models.voiceFiles
        let service = try TestService {
            $0.environment = ["CHORUS_MODELS_DIR": models.root.path]
            $0.registry = VoiceRegistry(providers: [KokoroProvider(folder: models.kokoro), EspeakProvider()])
            $0.queueLimit = 1
        }
        let silence = try ClipEncoding.wav16.data(
            AudioBuffer(format: AudioFormat(sampleRate: 16_000, channels: 1), samples: [Float](repeating: 0, count: 16_000 * 15)))
        try await service.test { client in
            for (form, field) in [
                (Self.form(name: nil, files: [("a.wav", silence)]), "name"),
                (Self.form(name: "x", files: []), "files"),
                (Self.form(name: "x", files: [("a.wav", Data())]), "files[0]"),
                (Self.form(name: "x", files: [("a.wav", silence)], fields: ["labels": #"{"gender": "robot"}"#]), "labels.gender"),
                (Self.form(name: "x", files: [("a.wav", silence)], fields: ["labels": "not json"]), "labels"),
                (Self.form(name: "x", files: [("a.wav", silence)], fields: ["candidates": "1"]), "candidates"),
                (Self.form(name: "x", files: Array(repeating: ("a.wav", silence), count: 17)), "files"),
            ] {
                let answer = try await client.call(.post, "/v1/voices/add", body: form.0, headers: form.1)
                #expect(answer.status == .unprocessableContent, "\(field): \(answer.text)")
                #expect((try? answer.decode(ErrorBody.self))?.error.field == field, "\(answer.text)")
            }
            let notMultipart = try await client.call(.post, "/v1/voices/add", json: #"{"name": "x"}"#)
            #expect(notMultipart.status == .badRequest)

            let (body, headers) = Self.form(name: "Quiet", files: [("silence.wav", silence)], fields: ["candidates": "4"])
            let first = try await client.call(.post, "/v1/voices/add", body: body, headers: headers).decode(VoiceAddResponse.self)
            // One creation at a time in a queue of one: another is refused until it ends.
            let full = try await client.call(.post, "/v1/voices/add", body: body, headers: headers)
            #expect(full.status == .serviceUnavailable && full.headers[.retryAfter] != nil, "\(full.text)")
            let job = try await Self.ended(client, first.job)
            #expect(job.status == "failed" && job.error?.contains("no speech") == true, "\(job)")
            #expect(models.voiceFiles == before)
        }
    }
}

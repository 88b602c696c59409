import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusService

@Suite("Service: clips, voices, cloning")
struct ClipAndVoiceRouteTests {
    static func voiceNote(seconds: Double, seed: UInt64 = 1) async throws -> Data {
        // Made on a thread of its own: a minute of AAC takes seconds under the sanitizers, and a cooperative thread
        // held that long stalls the in-process services of every other test.
        try await offCooperativeThreads {
            let format = AudioFormat(sampleRate: 44_100, channels: 2)
            return try ClipEncoding.m4a.data(SignalGenerator.speechLike(fundamental: 150, seconds: seconds, format: format, seed: seed))
        }
    }

    @Test("POST /v1/clips: 201 with the probe, 200 with the same id for the same bytes; renders use the clip by id")
    func clips() async throws {
        let service = try TestService()
        let note = try await Self.voiceNote(seconds: 2)
        try await service.test { client in
            let first = try await client.call(.post, "/v1/clips", body: note)
            #expect(first.status == .created, "\(first.text)")
            let info = try first.decode(ClipInfo.self)
            #expect(info.id == ClipStore.id(of: note) && info.sampleRate == 44_100 && info.channels == 2 && info.codec == "aac")
            #expect(abs(info.duration - 2) < 0.001 && info.samples == 88_200)
            let again = try await client.call(.post, "/v1/clips", body: note)
            #expect(try again.status == .ok && (try again.decode(ClipInfo.self)) == info)
            let render = try await client.call(
                .post, "/v1/renders",
                json: #"""
                    {"messages": [{"speaker": "Mom", "clip": "\#(info.id)", "text": "On my way."}, {"speaker": "Kid", "text": "Okay."},
                                  {"speaker": "Mom", "audio_base64": "\#(note.base64EncodedString())"}], "output": {"format": "wav"}}
                    """#)
            #expect(render.status == .created, "\(render.text)")
            let segments = try render.decode(RenderManifest.self).timeline!.segments
            #expect(segments.map(\.speaker) == ["Mom", "Kid", "Mom"] && segments[0].source == "clip:\(info.id)")
        }
    }

    @Test("an intro clip (inline) and a spoken outro: placed in the program, in the timeline, part of the id; paths refused")
    func introAndOutro() async throws {
        let service = try TestService()
        let jingle = try await Self.voiceNote(seconds: 1.5, seed: 7)
        try await service.test { client in
            let body = #"""
                {"intro": {"audio_base64": "\#(jingle.base64EncodedString())"}, "outro": {"speaker": "Host", "text": "Bye now."},
                 "messages": [{"speaker": "Mom", "text": "Dinner at seven."}], "gap_ms": 500, "output": {"format": "wav"}}
                """#
            let render = try await client.call(.post, "/v1/renders", json: body)
            #expect(render.status == .created, "\(render.text)")
            let manifest = try render.decode(RenderManifest.self)
            let timeline = try #require(manifest.timeline)
            let intro = try #require(timeline.intro)
            let outro = try #require(timeline.outro)
            #expect(intro.startSample == 0 && intro.source == "intro.audio_base64" && intro.speaker == nil)
            #expect(timeline.segments[0].startSample == intro.endSample + 22_050)
            #expect(outro.startSample == timeline.segments[0].endSample + 22_050 && outro.endSample == timeline.samples)
            #expect(outro.speaker == "Host" && outro.text == "Bye now." && outro.voice != nil)
            let audio = try await client.call(.get, manifest.audioURL!)
            #expect(try AudioFileReader(data: audio.data, name: "audio").readAll().frameCount == timeline.samples)
            // Without the outro, another render.
            let shorter = try await client.call(
                .post, "/v1/renders", json: body.replacingOccurrences(of: #", "outro": {"speaker": "Host", "text": "Bye now."}"#, with: ""))
            #expect(try shorter.decode(RenderManifest.self).id != manifest.id)
            for (json, field, code) in [
                (#"{"intro": {"audio": "/etc/passwd"}, "messages": [{"speaker": "A", "text": "x"}]}"#, "intro.audio", "path_not_allowed"),
                (#"{"outro": {"text": "x"}, "messages": [{"speaker": "A", "text": "x"}]}"#, "outro.speaker", "invalid"),
            ] {
                let refused = try await client.call(.post, "/v1/renders", json: json)
                let error = try refused.decode(ErrorBody.self).error
                #expect(refused.status == .unprocessableContent && error.field == field && error.code == code, "\(error)")
            }
        }
    }

    @Test("a music bed (an uploaded clip): under the program, in the timeline, part of the id; a bed without audio, out of range or by path refused")
    func musicBed() async throws {
        let service = try TestService()
        let bed = try await Self.voiceNote(seconds: 2, seed: 11)
        try await service.test { client in
            let clip = try await client.call(.post, "/v1/clips", body: bed).decode(ClipInfo.self)
            let body = #"""
                {"music": {"clip": "\#(clip.id)", "level_lu": -24, "duck_db": 15, "fade_out_ms": 1000},
                 "messages": [{"speaker": "Mom", "text": "Dinner at seven."}, {"speaker": "Dad", "text": "See you then."}], "output": {"format": "wav"}}
                """#
            let render = try await client.call(.post, "/v1/renders", json: body)
            #expect(render.status == .created, "\(render.text)")
            let manifest = try render.decode(RenderManifest.self)
            let timeline = try #require(manifest.timeline)
            let music = try #require(timeline.music)
            #expect(music.startSample == 0 && music.endSample == timeline.samples && music.source == "clip:\(clip.id)")
            #expect(music.levelLU == -24 && music.duckDB == 15 && music.passes >= 2)
            #expect(timeline.samples == timeline.segments[1].endSample + 44_100, "a 1 s tail")
            let audio = try await client.call(.get, manifest.audioURL!)
            #expect(try AudioFileReader(data: audio.data, name: "audio").readAll().frameCount == timeline.samples)
            // Another level, another render.
            let quieter = try await client.call(.post, "/v1/renders", json: body.replacingOccurrences(of: "-24", with: "-30"))
            #expect(try quieter.decode(RenderManifest.self).id != manifest.id)
            for (json, field, code) in [
                (#"{"music": {"audio": "/srv/bed.mp3"}, "messages": [{"speaker": "A", "text": "x"}]}"#, "music.audio", "path_not_allowed"),
                (#"{"music": {"level_lu": -20}, "messages": [{"speaker": "A", "text": "x"}]}"#, "music", "invalid"),
                (#"{"music": {"clip": "\#(clip.id)", "duck_db": 41}, "messages": [{"speaker": "A", "text": "x"}]}"#, "music.duck_db", "invalid"),
            ] {
                let refused = try await client.call(.post, "/v1/renders", json: json)
                let error = try refused.decode(ErrorBody.self).error
                #expect(refused.status == .unprocessableContent && error.field == field && error.code == code, "\(error)")
            }
        }
    }

    @Test("bad uploads: empty → 400, not audio → 415, damaged → 422, too long → 422, too big → 413")
    func badUploads() async throws {
        let service = try TestService { configuration in
            configuration.maxClipSeconds = 3
            configuration.maxBodyBytes = 400_000
        }
        let note = try await Self.voiceNote(seconds: 2)
        try await service.test { client in
            #expect(try await client.call(.post, "/v1/clips", body: Data()).status == .badRequest)
            let text = try await client.call(.post, "/v1/clips", body: Data(String(repeating: "hello ", count: 200).utf8))
            #expect(text.status == .unsupportedMediaType && text.errorCode == "unsupported_media")
            let cut = try await client.call(.post, "/v1/clips", body: note.prefix(note.count / 3))
            #expect([415, 422].contains(Int(cut.status.code)), "\(cut.text)")
            let long = try await client.call(.post, "/v1/clips", body: try await Self.voiceNote(seconds: 4, seed: 2))
            #expect(long.status == .unprocessableContent && long.errorCode == "clip_too_long")
            let big = try await client.call(.post, "/v1/clips", body: Data(count: 500_000))
            #expect(big.status == .contentTooLarge)
        }
    }

    @Test("GET /v1/voices lists espeak-ng and OpenAI voices; ElevenLabs without a key is left out")
    func voices() async throws {
        let service = try TestService()
        try await service.test { client in
            let list = try await client.call(.get, "/v1/voices").decode(VoiceList.self)
            #expect(list.voices.contains { $0.id == "espeak:en-us+m3?pitch=38&rate=165" })
            #expect(list.voices.contains { $0.id == "openai:nova" && $0.provider == "openai" })
            #expect(!list.voices.contains { $0.provider == "elevenlabs" })
            #expect(list.voices.contains { $0.provider == "espeak" && $0.gender != nil && $0.language != nil })
        }
    }

    @Test("voice cloning: 409 without ElevenLabs; checks before calling out; forwards multipart to /v1/voices/add; deletes")
    func cloning() async throws {
        let unconfigured = try TestService()
        try await unconfigured.test { client in
            let response = try await client.call(.post, "/v1/voices/clone", json: #"{"name": "Mom", "clips": ["ab"]}"#)
            #expect(response.status == .conflict && response.errorCode == "provider_not_configured")
        }
        let stub = try StubServer { request in
            switch (request.method, request.path) {
            case ("POST", "/v1/voices/add"): return .json(200, ["voice_id": "c38kUX8pkfYO2kHyqfFy", "requires_verification": false])
            case ("DELETE", "/v1/voices/c38kUX8pkfYO2kHyqfFy"): return .json(200, ["status": "ok"])
            default: return .json(404, ["detail": ["status": "voice_not_found", "message": "A voice with that id was not found."]])
            }
        }
        let service = try TestService(stub: stub)
        try await service.test { client in
            let short = try await client.call(.post, "/v1/clips", body: try await Self.voiceNote(seconds: 4)).decode(ClipInfo.self)
            let tooLittle = try await client.call(.post, "/v1/voices/clone", json: #"{"name": "Mom", "clips": ["\#(short.id)"]}"#)
            #expect(tooLittle.status == .unprocessableContent && tooLittle.errorCode == "clip_length")
            let unknown = try await client.call(
                .post, "/v1/voices/clone", json: #"{"name": "Mom", "clips": ["\#(String(repeating: "c", count: 64))"]}"#)
            #expect(unknown.status == .unprocessableContent && unknown.errorCode == "clip_not_found")
            let many = try await client.call(
                .post, "/v1/voices/clone",
                json: #"{"name": "Mom", "clips": [\#(Array(repeating: "\"\(short.id)\"", count: 26).joined(separator: ","))]}"#)
            #expect(many.status == .unprocessableContent)
            #expect(stub.requests.isEmpty, "nothing was sent to ElevenLabs")
            let second = try await client.call(.post, "/v1/clips", body: try await Self.voiceNote(seconds: 7, seed: 3)).decode(ClipInfo.self)
            let cloned = try await client.call(
                .post, "/v1/voices/clone",
                json: #"{"name": "Mom", "clips": ["\#(short.id)", "\#(second.id)"], "description": "warm", "remove_background_noise": true}"#)
            #expect(cloned.status == .created, "\(cloned.text)")
            #expect(
                try cloned.decode(VoiceCloneResponse.self)
                    == VoiceCloneResponse(id: "elevenlabs:c38kUX8pkfYO2kHyqfFy", name: "Mom", requiresVerification: false))
            let request = try #require(stub.requests.first)
            #expect(
                request.headers["xi-api-key"] == providerKey && request.headers["content-type"]?.hasPrefix("multipart/form-data; boundary=") == true)
            let body = String(decoding: request.body, as: UTF8.self)
            #expect(body.contains("name=\"name\"\r\n\r\nMom\r\n") && body.contains("name=\"remove_background_noise\"\r\n\r\ntrue"))
            #expect(body.components(separatedBy: "name=\"files\"; filename=").count == 3, "two files")
            #expect(try await client.call(.delete, "/v1/voices/elevenlabs:c38kUX8pkfYO2kHyqfFy").status == .noContent)
            #expect(try await client.call(.delete, "/v1/voices/elevenlabs:nope").status == .notFound)
            #expect(try await client.call(.delete, "/v1/voices/openai:nova").status == .unprocessableContent)
        }
    }
}

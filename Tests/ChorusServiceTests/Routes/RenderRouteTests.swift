import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusService
@testable import ChorusSpeech

@Suite("Service: renders")
struct RenderRouteTests {
    @Test("POST /v1/renders renders synchronously (201); the same request again is 200 with zero provider requests")
    func syncAndCached() async throws {
        let stub = try StubSpeech.openAIServer(latency: 0)
        let service = try TestService(stub: stub)
        try await service.test { client in
            let body = textRequest(["Dinner at seven tonight.", "I will bring the bread."], voice: "openai:nova")
            let first = try await client.call(.post, "/v1/renders", json: body)
            #expect(first.status == .created, "\(first.text)")
            let manifest = try first.decode(RenderManifest.self)
            #expect(manifest.status == .done && manifest.format == "mp3" && manifest.sampleRate == 44_100)
            #expect(manifest.audioURL == "/v1/renders/\(manifest.id)/audio")
            #expect(manifest.timeline?.segments.count == 2 && manifest.samples == manifest.timeline?.samples)
            #expect(first.headers[.contentLocation] == "/v1/renders/\(manifest.id)")
            #expect(stub.requests.count == 2)
            let again = try await client.call(.post, "/v1/renders", json: body)
            #expect(again.status == .ok)
            #expect(try again.decode(RenderManifest.self).id == manifest.id)
            #expect(stub.requests.count == 2, "no provider request for a render that exists")
            // The stored audio is what the manifest says.
            let audio = try await client.call(.get, manifest.audioURL!)
            #expect(audio.status == .ok && audio.headers[.contentType] == "audio/mpeg")
            #expect(try AudioFileReader(data: audio.data, name: "audio").readAll().frameCount == manifest.samples)
        }
    }

    @Test(
        "normalize_text: the offline voice reads the reference as people do unless told not to; the written tokens stay; part of the id; a bad value names the field"
    )
    func normalizeText() async throws {
        let service = try TestService()
        try await service.test { client in
            func body(_ extra: String) -> String {
                #"{"messages": [{"speaker": "A", "text": "Read John 3:16 tonight.", "voice": "espeak:en-us"}]\#(extra)}"#
            }
            var ids: [String] = []
            var lengths: [Int] = []
            for extra in ["", #", "normalize_text": false"#, #", "normalize_text": {"espeak": false}"#] {
                let response = try await client.call(.post, "/v1/renders", json: body(extra))
                let manifest = try response.decode(RenderManifest.self)
                #expect(manifest.timeline?.segments[0].words?.map(\.word) == ["Read", "John", "3:16", "tonight"], "\(extra)")
                ids.append(manifest.id)
                lengths.append(manifest.samples ?? 0)
            }
            #expect(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2])
            // "chapter three, verse sixteen" takes longer to say than "three sixteen"; off for all or for espeak: the same audio.
            #expect(lengths[0] > lengths[1] + 44_100 / 2 && lengths[1] == lengths[2], "\(lengths)")
            let bad = try await client.call(.post, "/v1/renders", json: body(#", "normalize_text": {"espeak": "yes"}"#))
            #expect(bad.status.code >= 400 && bad.status.code < 500 && bad.text.contains("normalize_text.espeak"), "\(bad.text)")
        }
    }

    @Test(
        "language and emoji: a language without rules reads as written, emoji said by name only when asked; the words stay the written ones; part of the id; bad values name the field"
    )
    func textReading() async throws {
        let service = try TestService()
        try await service.test { client in
            func body(_ extra: String) -> String {
                #"{"messages": [{"speaker": "A", "text": "Meet at 4:30 🎉 👍", "voice": "espeak:en-us"}]\#(extra)}"#
            }
            var ids: [String] = []
            var lengths: [Int] = []
            for extra in ["", #", "emoji": "name""#, #", "language": "de""#, #", "language": "en-GB""#] {
                let response = try await client.call(.post, "/v1/renders", json: body(extra))
                #expect(response.status == .created, "\(extra): \(response.text)")
                let manifest = try response.decode(RenderManifest.self)
                #expect(manifest.timeline?.segments[0].words?.map(\.word) == ["Meet", "at", "4:30"], "\(extra)")
                ids.append(manifest.id)
                lengths.append(manifest.samples ?? 0)
            }
            #expect(Set(ids).count == 4)
            // Named emoji ("party popper, thumbs up") take longer to say; en-GB has English's rules: as long as en.
            #expect(lengths[1] > lengths[0] + 44_100 / 2 && lengths[3] == lengths[0], "\(lengths)")
            for (extra, field) in [(#", "language": "klingon!""#, "language"), (#", "emoji": "say""#, "emoji")] {
                let bad = try await client.call(.post, "/v1/renders", json: body(extra))
                #expect(try bad.status.code == 422 && (try bad.decode(ErrorBody.self)).error.field == field, "\(bad.text)")
            }
        }
    }

    @Test(
        "POST /v1/renders/plan: each speaker's voice, named or by the defaults, and the render's own id, without rendering; checked as a render is"
    )
    func plan() async throws {
        let service = try TestService()
        try await service.test { client in
            let note = try Data(contentsOf: Repository.file("samples/clips/marcus-1.m4a"))
            let clip = try await client.call(.post, "/v1/clips", body: note).decode(ClipInfo.self)
            let body = #"""
                {"voices": {"Dad": "espeak:en-US"}, "speakers": {"Maya": {"sounds": "female"}},
                 "messages": [{"speaker": "Maya", "text": "Can we go?"}, {"speaker": "Dad", "text": "Yes."},
                              {"speaker": "Marcus", "clip": "\#(clip.id)"}, {"speaker": "Maya", "text": "Yay!", "voice": "flite:slt"}]}
                """#
            let planned = try await client.call(.post, ServicePaths.renderPlan, json: body)
            #expect(planned.status == .ok, "\(planned.text)")
            let plan = try planned.decode(RenderPlanResponse.self)
            #expect(plan.speakers.map(\.name) == ["Maya", "Dad", "Marcus"] && !plan.rendered)
            let maya = try #require(plan.speakers.first)
            #expect(maya.byDefault && maya.voice != nil && maya.voice == plan.messages[0])
            #expect(plan.speakers[1] == .init(name: "Dad", voice: "espeak:en-US", byDefault: false))
            #expect(plan.speakers[2] == .init(name: "Marcus", voice: nil, byDefault: false))
            #expect(plan.messages.count == 4 && plan.messages[2] == nil && plan.messages[3] == "flite:slt")
            // The plan is the render's: the same id, and the voices the timeline then names.
            let manifest = try await client.call(.post, "/v1/renders", json: body).decode(RenderManifest.self)
            #expect(manifest.id == plan.id)
            #expect(manifest.timeline?.segments.map(\.voice) == plan.messages)
            #expect(try await client.call(.post, ServicePaths.renderPlan, json: body).decode(RenderPlanResponse.self).rendered)
            // A request a render refuses is refused alike.
            let bad = try await client.call(
                .post, ServicePaths.renderPlan, json: #"{"messages": [{"speaker": "A", "text": "Hi.", "voice": "nobody:x"}]}"#)
            let refused = try await client.call(.post, "/v1/renders", json: #"{"messages": [{"speaker": "A", "text": "Hi.", "voice": "nobody:x"}]}"#)
            #expect(bad.status == refused.status && bad.status.code >= 400 && bad.errorCode == refused.errorCode)
        }
    }

    @Test("a message's gap_ms places it exactly (negative: cutting in), a loudness preset is met; both are part of the render's id")
    func messageGap() async throws {
        let stub = try StubSpeech.openAIServer(latency: 0)
        let service = try TestService(stub: stub)
        try await service.test { client in
            func body(_ gap: String) -> String {
                #"{"messages": [{"speaker": "A", "text": "Dinner at seven tonight.", "voice": "openai:nova"}, "#
                    + #"{"speaker": "B", "text": "Wait, what?", "voice": "openai:alloy"\#(gap)}], "output": {"format": "wav"}}"#
            }
            let cutIn = try await client.call(.post, "/v1/renders", json: body(#", "gap_ms": -200"#))
            #expect(cutIn.status == .created, "\(cutIn.text)")
            let manifest = try cutIn.decode(RenderManifest.self)
            let segments = try #require(manifest.timeline?.segments)
            #expect(segments[1].startSample == segments[0].endSample - 8_820)
            let plain = try await client.call(.post, "/v1/renders", json: body(""))
            let other = try plain.decode(RenderManifest.self)
            #expect(other.id != manifest.id)
            // A loudness preset is part of the id, and the stored audio meets it.
            let broadcast = try await client.call(
                .post, "/v1/renders", json: body("").replacingOccurrences(of: #""output""#, with: #""loudness_preset": "broadcast", "output""#))
            let quiet = try broadcast.decode(RenderManifest.self)
            #expect(quiet.id != other.id, "\(broadcast.text)")
            let audio = try await client.call(.get, quiet.audioURL!)
            let measured = try referenceLoudness(try AudioFileReader(data: audio.data, name: "audio").readAll())
            #expect(abs(measured.integrated! + 23) <= 1 && measured.truePeak <= -1, "\(measured)")
            #expect(other.timeline?.segments[1].startSample == (other.timeline?.segments[0].endSample ?? 0) + 13_230)
        }
    }

    @Test("the render id carries the settings of the provider that speaks only the outro")
    func outroSettingsInIdentity() throws {
        var conversation = Conversation(messages: [Conversation.Message(speaker: "Mom", audio: .data(Data([1]), label: "clip"))])
        conversation.outro = Conversation.Message(speaker: "Host", text: "Bye.", voice: VoiceID("openai:alloy"))
        func id(speed: Double) -> String {
            var settings = conversation
            settings.voiceSettings = ["openai": ["speed": .number(speed)]]
            let plan = try! RenderPlan(conversation: settings, voices: [nil], outroVoice: VoiceID("openai:alloy"), options: RenderOptions())
            return RenderIdentity.id(plan: plan, clipHashes: ["abc"], format: .mp3, transcription: nil)
        }
        #expect(id(speed: 1) != id(speed: 1.5))
        #expect(id(speed: 1) == id(speed: 1))
    }

    @Test("the render id carries a recorded message's clean-up settings, and ignores clean-up of a spoken one")
    func cleanupInIdentity() throws {
        var conversation = Conversation(messages: [
            Conversation.Message(speaker: "Mom", audio: .data(Data([1]), label: "clip")),
            Conversation.Message(speaker: "Dad", text: "Hi."),
        ])
        func id(_ cleanup: VoiceCleanup?) -> String {
            conversation.cleanup = cleanup
            let plan = try! RenderPlan(conversation: conversation, voices: [nil, VoiceID("espeak:en-us")], options: RenderOptions())
            return RenderIdentity.id(plan: plan, clipHashes: ["abc", nil], format: .mp3, transcription: nil)
        }
        let plain = id(nil)
        let cleaned = id(VoiceCleanup())
        #expect(plain != cleaned && cleaned != id(VoiceCleanup(maxSilenceMilliseconds: 1_000)) && cleaned == id(VoiceCleanup()))
        conversation.messages[0].cleanup = false
        #expect(id(VoiceCleanup()) == plain, "the one recorded message opted out")
    }

    @Test("a voice installed while a render waits in the queue changes neither its id nor its voices")
    func voicesFixedWhileQueued() async throws {
        let stub = try StubSpeech.openAIServer(latency: 2)
        let piper = try TemporaryDirectory(prefix: "chorus-queued-piper")
        let service = try TestService(stub: stub) {
            $0.workers = 1  // one render at a time: the second waits behind the first's slow provider
            $0.rateLimitPerMinute = 0
            $0.registry = VoiceRegistry(providers: ($0.registry?.providers.values.map { $0 } ?? []) + [PiperProvider(folder: piper.url)])
        }
        try await service.test { client in
            let async: HTTPFields = [.init("Prefer")!: "respond-async"]
            _ = try await client.call(.post, "/v1/renders", json: textRequest(["One moment."], voice: "openai:nova"), headers: async)
            let request = #"{"messages": [{"speaker": "Dad", "text": "Dinner is ready."}]}"#
            let accepted = try await client.call(.post, "/v1/renders", json: request, headers: async).decode(RenderManifest.self)
            #expect(accepted.status == .queued, "the second render waits")
            try FileManager.default.createSymbolicLink(
                at: piper.file(PiperVoice.defaultName), withDestinationURL: PiperVoice.voicesFolder().appendingPathComponent(PiperVoice.defaultName))
            var manifest = accepted
            for _ in 0..<600 where manifest.status != .done && manifest.status != .failed {
                try await Task.sleep(nanoseconds: 100_000_000)
                manifest = try await client.call(.get, "/v1/renders/\(accepted.id)").decode(RenderManifest.self)
            }
            #expect(manifest.id == accepted.id && manifest.status == .done)
            let voice = try #require(manifest.timeline?.segments.first?.voice)
            #expect(voice.hasPrefix("flite:"), "rendered with the voice assigned when it was accepted: \(voice)")
            // The same request now is another render: Piper's voice speaks Dad.
            let now = try await client.call(.post, "/v1/renders", json: request).decode(RenderManifest.self)
            #expect(now.id != accepted.id && now.timeline?.segments.first?.voice == "piper:\(PiperVoice.defaultName)")
        }
    }

    @Test("Prefer: respond-async answers 202 with Location; the manifest then goes queued/running → done")
    func asynchronous() async throws {
        let stub = try StubSpeech.openAIServer(latency: 0.3)
        let service = try TestService(stub: stub) { $0.rateLimitPerMinute = 0 }  // polling a slow (sanitized) build
        try await service.test { client in
            let response = try await client.call(
                .post, "/v1/renders", json: textRequest(["One.", "Two.", "Three."], voice: "openai:nova"),
                headers: [.init("Prefer")!: "respond-async"])
            #expect(response.status == .accepted)
            let accepted = try response.decode(RenderManifest.self)
            #expect([.queued, .running].contains(accepted.status) && accepted.progress?.total == 3)
            #expect(response.headers[.location] == "/v1/renders/\(accepted.id)")
            var manifest = accepted
            for _ in 0..<600 where manifest.status != .done {
                try await Task.sleep(nanoseconds: 100_000_000)
                manifest = try await client.call(.get, "/v1/renders/\(accepted.id)").decode(RenderManifest.self)
            }
            #expect(manifest.status == .done && manifest.timeline?.segments.count == 3)
            let notReady = try await client.call(
                .post, "/v1/renders", json: textRequest(["Four."], voice: "openai:nova"),
                headers: [.init("Prefer")!: "respond-async"])
            let id = try notReady.decode(RenderManifest.self).id
            let early = try await client.call(.get, "/v1/renders/\(id)/audio")
            #expect(early.status == .conflict && early.errorCode == "not_ready")
        }
    }

    @Test("renders carry one chapter per message by default (ffprobe reads them from the served audio); output.chapters false → none")
    func chapters() async throws {
        try #require(Referee.available, "ffmpeg/ffprobe (the referee) is not installed")
        let service = try TestService()
        try await service.test { client in
            for (format, chapters) in [("mp3", nil), ("m4a", nil), ("ogg", nil), ("mp3", false)] as [(String, Bool?)] {
                let extra = chapters.map { #", "output": {"format": "\#(format)", "chapters": \#($0)}"# } ?? #", "output": {"format": "\#(format)"}"#
                let created = try await client.call(
                    .post, "/v1/renders", json: textRequest(["Practice moved to half past four.", "See you there."], extra: extra))
                #expect(created.status == .created, "\(created.text.prefix(300))")
                let manifest = try created.decode(RenderManifest.self)
                let audio = try await client.call(.get, "/v1/renders/\(manifest.id)/audio")
                let file = service.directory.file("served.\(format)")
                try audio.data.write(to: file)
                let read = try await Referee.chapters(file)
                if chapters == false {
                    #expect(read.isEmpty)
                } else {
                    let segments = try #require(manifest.timeline?.segments)
                    #expect(read.map(\.title) == ["S0: Practice moved to half past four.", "S1: See you there."], "\(format)")
                    #expect(read.count == 2 && abs(read[1].start - segments[1].start) <= 0.0005, "\(format)")
                }
            }
            // Speech is one utterance: no chapter.
            let speech = try await client.call(
                .post, "/v1/audio/speech", json: #"{"model": "tts-1", "input": "One utterance.", "voice": "espeak:en-us"}"#)
            let file = service.directory.file("speech.mp3")
            try speech.data.write(to: file)
            let speechChapters = try await Referee.chapters(file)
            #expect(speech.status == .ok && speechChapters.isEmpty)
        }
    }

    @Test("timeline, captions, waveform (derived zooms equal a direct computation on the stored audio), delete")
    func derivedRoutes() async throws {
        let service = try TestService()
        try await service.test { client in
            let created = try await client.call(.post, "/v1/renders", json: textRequest(["Practice moved to half past four.", "See you there."]))
            let manifest = try created.decode(RenderManifest.self)
            let base = "/v1/renders/\(manifest.id)"
            let timeline = try await client.call(.get, base + "/timeline")
            #expect(try timeline.decode(Timeline.self) == manifest.timeline)
            let captions = try await client.call(.get, base + "/captions.vtt")
            #expect(captions.headers[.contentType]?.hasPrefix("text/vtt") == true && captions.text.hasPrefix("WEBVTT"))
            let stored = service.configuration.dataDirectory.appendingPathComponent("renders/\(manifest.id)/audio.mp3")
            for (query, spp, bits) in [
                ("", 256, 16), ("?samples_per_pixel=512&bits=8", 512, 8), ("?pixels_per_second=100", 441, 16),
                ("?samples_per_pixel=96", 96, 16),
            ] {
                let response = try await client.call(.get, base + "/waveform" + query)
                #expect(response.status == .ok, "\(query): \(response.text)")
                let expected = try WaveformPeaks.compute(fileAt: stored, zoom: .samplesPerPixel(spp))
                #expect(response.data == expected.jsonData(bits: bits), "\(query) differs from chorus waveform on the stored audio")
            }
            let dat = try await client.call(.get, base + "/waveform?format=dat&bits=8&samples_per_pixel=1024")
            #expect(dat.data == (try WaveformPeaks.compute(fileAt: stored, zoom: .samplesPerPixel(1024))).datData(bits: 8))
            for bad in [
                "?bits=12", "?samples_per_pixel=1", "?pixels_per_second=40000", "?format=png", "?samples_per_pixel=x",
                "?samples_per_pixel=300&pixels_per_second=10",
            ] {
                #expect(try await client.call(.get, base + "/waveform" + bad).status == .badRequest, "\(bad)")
            }
            let png = try await client.call(.get, base + "/waveform.png?width=400&height=100&theme=dark")
            #expect(png.status == .ok && png.headers[.contentType] == "image/png" && png.data.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
            let svg = try await client.call(.get, base + "/waveform.svg")
            #expect(svg.status == .ok && svg.text.hasPrefix("<svg") && svg.text.contains("width=\"1200\""))
            for bad in ["?width=10", "?height=9999", "?theme=pink", "?width=abc"] {
                #expect(try await client.call(.get, base + "/waveform.png" + bad).status == .badRequest, "\(bad)")
            }
            #expect(try await client.call(.delete, base).status == .noContent)
            #expect(try await client.call(.get, base).status == .notFound)
            #expect(try await client.call(.get, base + "/audio").status == .notFound)
            #expect(!FileManager.default.fileExists(atPath: stored.path))
        }
    }

    @Test(
        "bad requests name the field: paths refused, limits, unknown clips, bad JSON, bad settings",
        arguments: [
            (#"{"messages": [{"speaker": "A", "audio": "/etc/passwd"}]}"#, 422, "path_not_allowed", "messages[0].audio"),
            (#"{"messages": [{"speaker": "A", "text": "x"}], "cleanup": {"highpass_hz": 999}}"#, 422, "invalid", "cleanup.highpass_hz"),
            (#"{"messages": [{"speaker": "A", "text": "x"}], "cleanup": {"max_silence_ms": 50}}"#, 422, "invalid", "cleanup.max_silence_ms"),
            (#"{"messages": [{"speaker": "A", "clip": "\#(String(repeating: "ab", count: 32))"}]}"#, 422, "clip_not_found", "messages[0].clip"),
            (#"{"messages": [{"speaker": "A", "clip": "../../etc/passwd"}]}"#, 422, "clip_not_found", "messages[0].clip"),
            (#"{"messages": [{"speaker": "A", "audio_base64": "bm90IGF1ZGlv"}]}"#, 415, "unsupported_media", "messages[0].audio_base64"),
            (#"{"messages": [{"speaker": "A", "text": "x"}], "output": {"sample_rate": 7}}"#, 422, "invalid", "output.sample_rate"),
            (#"{"messages": [{"speaker": "A", "text": "x"}], "output": {"format": "aiff"}}"#, 422, "invalid", "output.format"),
            (#"{"messages": [{"speaker": "A", "text": "x"}], "output": {"loudness": 3}}"#, 422, "invalid", "output.loudness"),
            (#"{"messages": [{"speaker": "A", "text": "x"}], "gap_ms": -1}"#, 422, "invalid", "gap_ms"),
            (
                #"{"messages": [{"speaker": "A", "text": "x"}, {"speaker": "B", "text": "y", "gap_ms": -60001}]}"#, 422, "invalid",
                "messages[1].gap_ms"
            ),
            (#"{"messages": [{"speaker": "A", "text": "x"}], "loudness_preset": "loud"}"#, 422, "invalid", "loudness_preset"),
            (
                #"{"messages": [{"speaker": "A", "text": "x"}], "loudness_preset": "podcast", "output": {"loudness": -20}}"#, 422, "invalid",
                "loudness_preset"
            ),
            (
                #"{"messages": [{"speaker": "A", "text": "x"}], "loudness_preset": "podcast", "output": {"normalize": false}}"#, 422, "invalid",
                "loudness_preset"
            ),
            (#"{"messages": [{"speaker": "A", "text": "x", "voice": "nova"}]}"#, 422, "invalid", "messages[0].voice"),
            (#"{"messages": [{"speaker": "A", "text": "x", "voice": "acme:v"}]}"#, 422, "unknown_provider", nil),
            (#"{"messages": [{"speaker": "", "text": "x"}]}"#, 422, "invalid", "messages[0].speaker"),
            (#"{"messages": [{"speaker": "A"}]}"#, 422, "invalid", "messages[0]"),
            (#"{"messages": []}"#, 422, "invalid", "messages"),
            (#"{"messages": [{"text": "x"}]}"#, 400, "invalid_request", "messages[0].speaker"),
            (#"{"messages": [{"speaker": 3, "text": "x"}]}"#, 400, "invalid_request", "messages[0].speaker"),
            (#"{"messages": "#, 400, "invalid_request", nil),
            ("", 400, "invalid_request", nil),
        ] as [(String, Int, String, String?)])
    func badRequests(json: String, status: Int, code: String, field: String?) async throws {
        let service = try TestService()
        try await service.test { client in
            let response = try await client.call(.post, "/v1/renders", json: json)
            #expect(Int(response.status.code) == status, "\(response.text)")
            let error = try response.decode(ErrorBody.self).error
            #expect(error.code == code)
            if let field { #expect(error.field == field, "\(error)") }
            #expect(!error.message.contains(service.configuration.dataDirectory.path), "no server paths in errors")
        }
    }

    @Test("limits: messages, characters per message and in all → 413 too_large naming the limit; a body over the cap → 413")
    func limits() async throws {
        let service = try TestService { configuration in
            configuration.maxMessages = 3
            configuration.maxMessageCharacters = 20
            configuration.maxTotalCharacters = 30
            configuration.maxBodyBytes = 4_096
        }
        try await service.test { client in
            for (json, limit) in [
                (textRequest(["a", "b", "c", "d"]), "limit is 3"), (textRequest([String(repeating: "x", count: 21)]), "limit is 20"),
                (textRequest([String(repeating: "x", count: 16), String(repeating: "y", count: 16)]), "limit is 30"),
            ] {
                let response = try await client.call(.post, "/v1/renders", json: json)
                #expect(response.status == .contentTooLarge && response.errorCode == "too_large" && response.text.contains(limit), "\(response.text)")
            }
            let huge = try await client.call(.post, "/v1/renders", json: textRequest([String(repeating: "z", count: 5_000)]))
            #expect(huge.status == .contentTooLarge && huge.errorCode == "too_large")
        }
    }

    @Test(
        "a voice that does not exist → 422 unknown_voice, also when streaming (the status waits for the first audio); a provider without its key → 409"
    )
    func unknownVoice() async throws {
        let service = try TestService()
        try await service.test(.live) { client in
            for query in ["", "?stream=true"] {
                let render = try await client.call(.post, "/v1/renders" + query, json: textRequest(["Hello."], voice: "espeak:0"))
                #expect(render.status == .unprocessableContent, "\(query): \(render.status) \(render.text.prefix(300))")
                let error = try render.decode(ErrorBody.self).error
                #expect(error.code == "unknown_voice" && error.field == "messages[0].voice" && error.message.contains("espeak:0"))
                let speech = try await client.call(.post, "/v1/speech" + query, json: #"{"text": "Hi.", "voice": "espeak:00"}"#)
                #expect(speech.status == .unprocessableContent && speech.errorCode == "unknown_voice", "\(query): \(speech.text.prefix(300))")
            }
            // A provider without its key: 409 provider_not_configured (the service's setup), not a 502.
            let unconfigured = try await client.call(.post, "/v1/renders", json: textRequest(["Hello."], voice: "openai:nova"))
            #expect(unconfigured.status == .conflict && unconfigured.errorCode == "provider_not_configured", "\(unconfigured.text.prefix(300))")
            // A good voice still streams: 200 and audio that decodes.
            let streamed = try await client.call(
                .post, "/v1/speech?stream=true", json: #"{"text": "Streaming still works.", "voice": "espeak:en-us"}"#)
            #expect(streamed.status == .ok && streamed.data.count > 1_000)
            #expect(try AudioFileReader(data: streamed.data, name: "streamed speech").readAll().frameCount > 10_000)
        }
    }

    @Test("a provider that fails for good → 502 provider_error naming the provider and message, never a key")
    func providerFailure() async throws {
        let stub = try StubServer { _ in
            .json(
                401, ["error": ["message": "Incorrect API key provided: \(providerKey)", "type": "invalid_request_error", "code": "invalid_api_key"]])
        }
        let service = try TestService(stub: stub)
        try await service.test { client in
            let response = try await client.call(.post, "/v1/renders", json: textRequest(["Hello.", "Goodbye."], voice: "openai:nova"))
            #expect(response.status == .badGateway, "\(response.text)")
            let error = try response.decode(ErrorBody.self).error
            #expect(error.code == "provider_error" && error.message.contains("messages[") && error.message.contains("openai"))
            #expect(!response.text.contains("SECRET") && !response.text.contains(providerKey))
        }
        let leaks = service.logs.lines.filter { $0.contains("SECRET") }
        #expect(leaks.isEmpty, "no key in the logs: \(leaks)")
    }
}

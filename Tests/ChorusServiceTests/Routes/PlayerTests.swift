import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusService

/// `GET /v1/renders/{id}/player`: signed links, and the page itself in a real browser.
@Suite("The player page")
struct PlayerTests {
    /// The URLs the page was given (its inline configuration).
    static func pageConfiguration(_ html: String) throws -> [String: String] {
        let start = try #require(html.range(of: #"<script type="application/json" id="chorus-config">"#))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let json = html[start.upperBound..<end.lowerBound].replacingOccurrences(of: #"<\/"#, with: "</")
        return try JSONDecoder().decode([String: String].self, from: Data(json.utf8))
    }

    /// Submits asynchronously and polls (a 50-message render in a debug build on a busy machine can
    /// outlast the test client's read timeout).
    static func render(_ client: some TestClientProtocol, _ body: String) async throws -> RenderManifest {
        let response = try await client.call(.post, "/v1/renders", json: body, headers: [.init("Prefer")!: "respond-async"])
        #expect([.accepted, .created, .ok].contains(response.status), "\(response.text.prefix(300))")
        var manifest = try response.decode(RenderManifest.self)
        let deadline = Date().addingTimeInterval(300)
        while [.queued, .running].contains(manifest.status) && Date() < deadline {
            try await Task.sleep(nanoseconds: 500_000_000)
            let polled = try await client.call(.get, "/v1/renders/\(manifest.id)")
            #expect(polled.status == .ok, "\(polled.text.prefix(300))")
            manifest = try polled.decode(RenderManifest.self)
        }
        #expect(manifest.status == .done, "render \(manifest.id) ended \(manifest.status)")
        return manifest
    }

    @Test("the key once as ?key= → 303 to a signed link; the page's URLs carry their own signatures; tampered, expired or misused links → 401")
    func signedLinks() async throws {
        let service = try TestService()
        let id = try await service.test { client in
            let manifest = try await Self.render(client, textRequest(["Good morning.", "Morning to you."], voice: "espeak:en-us"))
            let player = "/v1/renders/\(manifest.id)/player"
            #expect(manifest.playerURL == player)

            #expect(try await client.call(.get, player, key: nil).status == .unauthorized)
            #expect(try await client.call(.get, player + "?key=not-the-key", key: nil).status == .unauthorized)
            for (uri, key) in [(player + "?key=\(serviceKey)", nil), (player, serviceKey)] as [(String, String?)] {
                let redirect = try await client.call(.get, uri, key: key)
                #expect(redirect.status == .seeOther)
                let location = try #require(redirect.headers[.location])
                #expect(location.hasPrefix(player + "?exp=") && location.contains("&sig=") && !location.contains(serviceKey))
                #expect(redirect.headers[.cacheControl] == "no-store")
            }
            let location = try #require(try await client.call(.get, player + "?key=\(serviceKey)", key: nil).headers[.location])

            let page = try await client.call(.get, location, key: nil)
            #expect(page.status == .ok && page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
            #expect(!page.text.contains(serviceKey))
            let urls = try Self.pageConfiguration(page.text)
            let audio = try #require(urls["audio"])
            let timeline = try #require(urls["timelineURL"])
            let peaks = try #require(urls["peaksURL"])
            #expect(audio.hasPrefix("/v1/renders/\(manifest.id)/audio?exp=") && timeline.hasPrefix("/v1/renders/\(manifest.id)/timeline?exp="))
            #expect(peaks.hasPrefix("/v1/renders/\(manifest.id)/waveform?samples_per_pixel=") && peaks.contains("&sig="))

            // Each signed URL works alone, with no key: ranges on the audio, the timeline, the peaks.
            let ranged = try await client.call(.get, audio, key: nil, headers: [.range: "bytes=0-99"])
            #expect(ranged.status == .partialContent && ranged.body.readableBytes == 100)
            #expect(try await client.call(.get, timeline, key: nil).decode(Timeline.self) == manifest.timeline)
            #expect(try await client.call(.get, peaks, key: nil).status == .ok)

            // Tampered signature, a signature moved to another path, an expired link, a write through a link.
            var tampered = Array(audio)
            tampered[tampered.count - 1] = tampered.last == "0" ? "1" : "0"
            #expect(try await client.call(.get, String(tampered), key: nil).status == .unauthorized)
            let query = String(audio[audio.firstIndex(of: "?")!...])
            #expect(try await client.call(.get, "/v1/renders/\(manifest.id)/timeline" + query, key: nil).status == .unauthorized)
            #expect(try await client.call(.get, "/v1/renders/\(manifest.id)/audio?exp=99999999999", key: nil).status == .unauthorized)
            let signer = URLSigner(secret: try URLSigner.secret(in: service.configuration.dataDirectory))
            let expired = signer.sign("/v1/renders/\(manifest.id)/audio", now: Date().timeIntervalSince1970 - URLSigner.lifetime - 1)
            #expect(try await client.call(.get, expired, key: nil).status == .unauthorized)
            let deletion = signer.sign("/v1/renders/\(manifest.id)")
            #expect(try await client.call(.delete, deletion, key: nil).status == .unauthorized)
            #expect(try await client.call(.get, "/v1/renders/\(manifest.id)").status == .ok)
            return (manifest.id, location)
        }
        // Links outlive a restart: the secret is kept in the data folder (readable by its owner only).
        let reopened = try await service.test { client in try await client.call(.get, id.1, key: nil).status }
        #expect(reopened == .ok)
        let mode =
            try FileManager.default.attributesOfItem(atPath: service.configuration.dataDirectory.appendingPathComponent("signing.key").path)[
                .posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("the page while the render runs → 409; an unknown render → 404")
    func notReady() async throws {
        let stub = try StubSpeech.openAIServer(latency: 1.5)
        let service = try TestService(stub: stub)
        try await service.test { client in
            let accepted = try await client.call(
                .post, "/v1/renders", json: textRequest(["Wait for it."], voice: "openai:nova"),
                headers: [.init("Prefer")!: "respond-async"]
            ).decode(RenderManifest.self)
            let running = try await client.call(.get, "/v1/renders/\(accepted.id)/player")
            #expect(running.status == .conflict && running.errorCode == "not_ready")
            #expect(try await client.call(.get, "/v1/renders/\(String(repeating: "a", count: RenderIdentity.length))/player").status == .notFound)
        }
    }

    @Test("in Chromium: plays, highlights the speaker, message and word the timeline names at each time, jumps by speaker; no key anywhere")
    func browser() async throws {
        let service = try TestService {
            $0.workers = 2
            $0.rateLimitPerMinute = 0  // polling a 50-message render on a slow (sanitized) build must not meet the limit
            $0.idleTimeoutSeconds = 900  // the test client's connection waits while the browser works (a minute and more under load)
        }
        let samples = Repository.file("samples")
        let familyChat = try String(contentsOf: samples.appendingPathComponent("family-chat.json"), encoding: .utf8)
        // Fifty messages among four speakers: the size the family-chat app plays.
        let lines = [
            "Are we still on for dinner tonight?", "Yes, seven o'clock at Grandma's.", "Can someone pick up bread on the way?",
            "I will, the bakery is next to my office.", "Do not forget the candles for the cake!",
        ]
        let speakers = ["Mom", "Dad", "Grandma", "Maya"]
        let fifty = (0..<50).map { #"{"speaker": "\#(speakers[$0 % 4])", "text": "\#(lines[$0 % lines.count])"}"# }
        let screenshot =
            ProcessInfo.processInfo.environment["CHORUS_PLAYER_SCREENSHOT"].map { URL(fileURLWithPath: $0) }
            ?? service.directory.file("player.png")
        try await service.test(.live) { client in
            let port = try #require(client.port)
            for (name, body) in [("family-chat", familyChat), ("fifty", #"{"messages": [\#(fifty.joined(separator: ","))]}"#)] {
                let manifest = try await Self.render(client, body)
                let timeline = service.directory.file("\(name).timeline.json")
                try JSONEncoder().encode(try #require(manifest.timeline)).write(to: timeline)
                let report = try await BrowserReferee.check(
                    url: "http://127.0.0.1:\(port)/v1/renders/\(manifest.id)/player?key=\(serviceKey)",
                    timeline: timeline, screenshot: name == "family-chat" ? screenshot : nil,
                    secrets: [serviceKey], signed: true)
                #expect(report.speakersSeen.count >= 2 && report.wordsSeen > 0 && report.played[1] > report.played[0])
                #expect(abs(report.duration - (manifest.duration ?? 0)) < 0.1)
                print(
                    "player \(name) (\(manifest.timeline?.segments.count ?? 0) messages, \(String(format: "%.1f", manifest.duration ?? 0)) s): "
                        + "interactive \(report.interactiveMs) ms, audio ready \(report.audioReadyMs) ms, waveform \(report.peaksMs) ms after navigation start"
                )
            }
            #expect(FileManager.default.fileExists(atPath: screenshot.path))
            #expect(!service.logs.text.contains(serviceKey))
        }
    }
}

import ChorusAudio
import ChorusInference
import ChorusListening
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusService

/// `GET /`: the studio page, its files, and the page used in Chromium as a user would.
@Suite("The studio page")
struct StudioTests {
    @Test("open without a key; a strict Content-Security-Policy; nothing inline, nothing from elsewhere, no markup made from strings")
    func files() async throws {
        let service = try TestService()
        try await service.test { client in
            var weight = 0
            for file in StudioController.files {
                let response = try await client.call(.get, file.path, key: nil)
                #expect(response.status == .ok, "\(file.path)")
                #expect(response.headers[.contentType] == file.contentType)
                let policy = try #require(response.headers[.contentSecurityPolicy])
                #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && policy.contains("style-src 'self'"))
                #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval") && !policy.contains("http"))
                #expect(response.headers[.xContentTypeOptions] == "nosniff")
                weight += response.body.readableBytes
            }
            let page = try await client.call(.get, "/", key: nil).text
            // Every script is a file of this service; no inline style or handler; no address of another origin.
            let scripts = page.components(separatedBy: "<script").dropFirst()
            #expect(scripts.count == 1 && scripts.allSatisfy { $0.hasPrefix(#" src="/studio/"#) })
            #expect(!page.contains("style=") && !page.contains("<style") && page.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil)
            #expect(!page.contains("http://") && !page.contains("https://") && !page.contains("//cdn"))
            let script = try await client.call(.get, ServicePaths.studioScript, key: nil).text
            for markup in [
                "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "localStorage.setItem", "setAttribute('on",
                "setAttribute(\"on",
            ] {
                #expect(!script.contains(markup), "the studio's script uses \(markup)")
            }
            #expect(!script.contains("http://") && !script.contains("https://"))
            #expect(weight < 64 * 1024, "the studio weighs \(weight) bytes")
            print("studio: \(weight) bytes in \(StudioController.files.count) files")
        }
    }

    @Test(
        "in Chromium: a wrong key is named, voices listed and played, a three-message conversation with a clip rendered and followed word by word, the MP3 downloaded and decoded, a clip transcribed, a lexicon entry saved and said, a speaker named like markup shown as text"
    )
    func browser() async throws {
        let service = try TestService {
            $0.workers = 2
            $0.rateLimitPerMinute = 0
            $0.idleTimeoutSeconds = 900  // the test client's connection waits while the browser works (a minute and more under load)
            $0.transcriptionModel = WhisperModel.defaultName  // the page transcribes a clip
            $0.environment["CHORUS_MODELS_DIR"] = ModelFolder.root().path
        }
        let downloads = service.directory.file("downloads")
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let screenshot =
            ProcessInfo.processInfo.environment["CHORUS_STUDIO_SCREENSHOT"].map { URL(fileURLWithPath: $0) }
            ?? service.directory.file("studio.png")
        let clip = Repository.file("samples/clips/marcus-1.m4a")
        try await service.test(.live) { client in
            let port = try #require(client.port)
            let report = try await BrowserReferee.studio(
                base: "http://127.0.0.1:\(port)", key: serviceKey, voices: ["flite:rms", "flite:slt"], clip: clip, clipWord: "four",
                downloads: downloads, screenshot: screenshot)
            #expect(report.wrongKeyMessage.contains("refused the key"))
            #expect(report.voices >= 2 && report.sampleSeconds > 0.5)
            #expect(report.wordsFollowed >= 3 && report.transcriptWordsLit >= 2)
            #expect(report.language == "english")
            #expect(report.lexicon.contains("family"))
            #expect(report.defaultVoices.count == 2 && report.defaultVoices.allSatisfy { $0.hasPrefix("default voice (") })
            #expect(report.refusedRender.hasPrefix("Message 2:") && report.exportedMessages == 3)

            // The render the page made: three messages by two speakers, one of them named like markup (as text).
            let manifest = try await client.call(.get, ServicePaths.render(report.render)).decode(RenderManifest.self)
            let timeline = try #require(manifest.timeline)
            #expect(timeline.segments.count == 3)
            #expect(timeline.speakers.map(\.name) == ["Ana", "<img src=x onerror=alert(1)>"])
            #expect(timeline.intro != nil, "the spoken intro composed on the page")
            // The download is that render's MP3: decoded by FFmpeg, as long as the manifest says.
            let downloaded = URL(fileURLWithPath: report.downloaded)
            #expect(downloaded.pathExtension == "mp3")
            let rate = try #require(manifest.sampleRate)
            let frames = try Referee.decodedFrames(downloaded, channels: try #require(manifest.channels))
            #expect(abs(Double(frames) / Double(rate) - (manifest.duration ?? 0)) < 0.1)
            print(
                "studio: interactive \(report.interactiveMs) ms after navigation start, \(report.voices) voices, "
                    + "words followed \(report.wordsFollowed)×, transcript \"\(report.transcript)\"")
        }
        #expect(FileManager.default.fileExists(atPath: screenshot.path))
        #expect(!service.logs.text.contains(serviceKey))
    }
}

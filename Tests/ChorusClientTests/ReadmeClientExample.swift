import ChorusClient
import ChorusWire
import Foundation
import Testing

#if canImport(AVFoundation)
import AVFoundation
#endif

/// The README's client example, compiled here (the AVFoundation part on Apple platforms). Between the
/// markers it is the README's code block without its import lines.
@MainActor
final class FamilyChatPlayer {
    // README BEGIN
    let chorus = ChorusClient(baseURL: URL(string: "https://chorus.example.com")!, apiKey: "the app backend's key")
    var timeline: Timeline?

    /// Uploads the voice note, renders the conversation, and starts playing it.
    func play(voiceNote: Data, reply: String) async throws {
        let clip = try await chorus.uploadClip(voiceNote)
        let manifest = try await chorus.render(
            RenderRequest(messages: [
                .init(speaker: "Mom", clip: clip.id),
                .init(speaker: "Maya", text: reply),
            ]))
        timeline = manifest.timeline
        #if canImport(AVFoundation)
        let asset = AVURLAsset(url: chorus.audioURL(manifest.id), options: ["AVURLAssetHTTPHeaderFieldsKey": chorus.authorizationHeader])
        let player = AVPlayer(playerItem: AVPlayerItem(asset: asset))
        player.play()
        #endif
    }

    /// Who is speaking at `seconds` into the audio (for the "now speaking" label).
    func speaker(at seconds: Double) -> String? {
        timeline?.segments.first { $0.start <= seconds && seconds < $0.end }?.speaker
    }
    // README END
}

@Suite("README client example")
struct ReadmeClientExampleTests {
    @Test("the client example in the README is the code compiled in this file")
    func exampleMatches() throws {
        var root = URL(fileURLWithPath: #filePath)
        while root.lastPathComponent != "Tests" { root.deleteLastPathComponent() }
        root.deleteLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let section = try #require(readme.range(of: "### The Swift client"))
        let block = readme[section.upperBound...].components(separatedBy: "```swift\n")[1].components(separatedBy: "```")[0]
        let shown = block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .filter { !$0.hasPrefix("import ") && !$0.hasPrefix("#if canImport(FoundationNetworking)") }
            .joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        let body = source.components(separatedBy: "// README BEGIN\n")[1].components(separatedBy: "    // README END")[0]
        let compiled = body.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(shown == compiled)
    }
}

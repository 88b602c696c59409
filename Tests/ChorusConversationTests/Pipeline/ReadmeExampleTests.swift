import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusWire

/// The README's "Use it as a library" example, compiled and run here. Between the markers it is the README's
/// code block without its import lines; the tests below fail when the two drift apart, and run it as a reader would,
/// from a folder holding `samples/`.
func readmeLibraryExample() async throws {
    // README BEGIN
    let chorus = try Chorus()  // Kokoro, Piper, Flite and espeak-ng offline; ElevenLabs and OpenAI when their keys are set
    let conversation = try Conversation.load(from: URL(fileURLWithPath: "samples/family-chat.json"))
    var options = RenderOptions()
    options.waveform = WaveformOptions(zoom: .pixelsPerSecond(100), bits: 8)
    let outputs = RenderOutputs(
        audio: URL(fileURLWithPath: "family-chat.mp3"),
        timeline: URL(fileURLWithPath: "family-chat.timeline.json"),
        waveform: URL(fileURLWithPath: "family-chat.dat"))

    for try await event in chorus.render(conversation, options: options, to: outputs) {
        switch event {
        case .progress(let progress):
            print("synthesized \(progress.synthesized)/\(progress.toSynthesize), rendered \(progress.rendered)/\(progress.total)")
        case .segment(let segment): print(segment.speaker, segment.startSample, segment.endSample)  // as soon as its place is fixed
        case .warning(let warning): print("warning:", warning)
        case .finished(let result): print("done:", result.timeline.duration, "s")
        }
    }
    // README END
}

@Suite("README", .serialized)
struct ReadmeExampleTests {

    @Test("the library example runs as shown: family-chat.mp3, its timeline and 8-bit peaks at 100 a second, from the offline voices")
    func exampleRuns() async throws {
        let folder = try TemporaryDirectory(prefix: "chorus-readme")
        try FileManager.default.createSymbolicLink(at: folder.file("samples"), withDestinationURL: Repository.file("samples"))
        // The example names its files relative to the current folder, as a reader's program would.
        let previous = FileManager.default.currentDirectoryPath
        #expect(FileManager.default.changeCurrentDirectoryPath(folder.url.path))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
        try await readmeLibraryExample()
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: folder.file("family-chat.timeline.json")))
        #expect(timeline.segments.count == 15)
        #expect(try AudioProbe.probe(folder.file("family-chat.mp3")).samples == timeline.samples)
        let peaks = try WaveformPeaks(datData: Data(contentsOf: folder.file("family-chat.dat")))
        #expect(
            peaks.samplesPerPixel == timeline.sampleRate / 100
                && peaks.length == (timeline.samples + peaks.samplesPerPixel - 1) / peaks.samplesPerPixel)
    }

    @Test("the library example in the README is the code compiled in this file")
    func exampleMatches() throws {
        let readme = try String(contentsOf: Repository.file("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let section = try #require(readme.range(of: "## Use it as a library"))
        let block = readme[section.upperBound...].components(separatedBy: "```swift\n")[1].components(separatedBy: "```")[0]
        let shown = block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            .filter { !$0.hasPrefix("import ") }.drop { $0.isEmpty }.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        let body = source.components(separatedBy: "// README BEGIN\n")[1].components(separatedBy: "    // README END")[0]
        let compiled = body.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(shown == compiled)
    }
}

import ChorusTextFuzzing
import Foundation
import Testing

/// The ssml fuzz target's committed inputs — its seed corpus and each input that once crashed it
/// (`Fuzz/regressions/ssml/`) — replayed through it with the text layer alone (ChorusFuzzingTests replays every
/// target's, with the whole engine linked). A crash here stops the test process, as it stopped the fuzzer.
@Suite("SSML fuzz corpus replay")
struct SSMLCorpusReplayTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz").standardized

    static func inputs(in kind: String) -> [URL] {
        let folder = fuzzFolder.appendingPathComponent(kind).appendingPathComponent("ssml")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test("the ssml seed corpus and regression inputs run through TextFuzzTarget.ssml without a crash")
    func replay() throws {
        let seeds = Self.inputs(in: "corpus")
        #expect(seeds.count >= 5, "the seed corpus is missing (\(Self.fuzzFolder.path)/corpus/ssml)")
        for file in seeds + Self.inputs(in: "regressions") {
            TextFuzzTarget.ssml(try Data(contentsOf: file))
        }
    }
}

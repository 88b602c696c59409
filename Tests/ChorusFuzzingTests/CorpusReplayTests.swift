import ChorusFuzzing
import Foundation
import Testing

/// Every committed fuzz input — the seed corpus and each input that once crashed a target
/// (`Fuzz/regressions/TARGET/`) — replayed through its target on every test run, so a fixed crash
/// stays fixed. A crash here stops the test process, as it stopped the fuzzer.
@Suite("Fuzz corpus replay")
struct CorpusReplayTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz").standardized

    static func inputs(of target: FuzzTarget, in kind: String) -> [URL] {
        let folder = fuzzFolder.appendingPathComponent(kind).appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test("each target's seed corpus and regression inputs run through it without a crash", arguments: FuzzTarget.allCases)
    func replay(target: FuzzTarget) throws {
        let seeds = Self.inputs(of: target, in: "corpus")
        #expect(seeds.count >= 5, "\(target.rawValue): the seed corpus is missing (\(Self.fuzzFolder.path)/corpus/\(target.rawValue))")
        for file in seeds + Self.inputs(of: target, in: "regressions") {
            target.run(try Data(contentsOf: file))
        }
    }

    @Test("the decode target accepts what it should: every seed of a supported format decodes")
    func seedsDecode() throws {
        // The corpus's valid files are named by what they are (`*.wav`, `*.mp3`, …); the malformed ones `bad-*`.
        let valid = Self.inputs(of: .decode, in: "corpus").filter { !$0.lastPathComponent.hasPrefix("bad-") }
        #expect(valid.count >= 10)
        for file in valid {
            #expect(FuzzTarget.decodes(try Data(contentsOf: file)), "\(file.lastPathComponent) should decode")
        }
    }
}

import Foundation
import Testing
@testable import ChorusAudio

/// A joiner double: a 100-sample grid and 50-sample margins, codecs that count what they are given (and fail on
/// request), and a record of what `ParallelEncoder` appends, in order.
final class RecordingJoiner: PieceJoiner {
    final class Codec: PieceCodec {
        struct Encoded: Equatable {
            var samples: Int
            var keeping: Int?
        }

        private var samples = 0
        private let failAfter: Int?

        init(failAfter: Int?) { self.failAfter = failAfter }

        func encode(_ samples: UnsafeBufferPointer<Float>) throws {
            self.samples += samples.count
            if let failAfter, self.samples > failAfter {
                throw AudioError(.encodingFailed, subject: "piece", reason: "failing as asked")
            }
        }

        func finish(keepingFrames: Int?) throws -> Encoded { Encoded(samples: samples, keeping: keepingFrames) }
    }

    struct Appended: Equatable {
        var index: Int
        var start: Int
        var encoded: Codec.Encoded
    }

    let frameSize = 100
    let margin = 50
    /// The first piece's codec fails once it has had more than this many samples.
    var failFirstAfter: Int?
    private(set) var made: [Int] = []
    private(set) var appended: [Appended] = []
    private(set) var finished: Int?

    func makeCodec(index: Int, start: Int) throws -> Codec {
        made.append(start)
        return Codec(failAfter: index == 0 ? failFirstAfter : nil)
    }

    func append(_ encoded: Codec.Encoded, index: Int, start: Int) throws {
        appended.append(Appended(index: index, start: start, encoded: encoded))
    }

    func finish(samples: Int, chapters: [ChapterMark]) throws { finished = samples }
}

@Suite("Parallel encoder: where it cuts and what it hands its joiner")
struct ParallelEncoderCutTests {
    static let format = AudioFormat(sampleRate: 8_000, channels: 1)

    /// Sound, silence, sound, … with the given lengths (sound first).
    static func stretches(_ lengths: [Int]) -> [Float] {
        lengths.enumerated().flatMap { index, length in [Float](repeating: index % 2 == 0 ? 0.5 : 0, count: length) }
    }

    static func feed(_ samples: [Float], to encoder: ParallelEncoder<RecordingJoiner>, chunk: Int) throws {
        var start = 0
        while start < samples.count {
            let end = min(samples.count, start + chunk)
            try samples[start..<end].withUnsafeBufferPointer { try encoder.write($0, pcm16: UnsafeBufferPointer(start: nil, count: 0)) }
            start = end
        }
    }

    @Test("a cut on the grid nearest the middle of a long enough silence; none in one too short for two margins",
          arguments: [1, 37, 4_096])
    func cutsAndPieces(chunk: Int) throws {
        // Silence 1000..<1400: grid points 50 samples inside it are 1100…1300, the middle 1200. Silence 2400..<2520:
        // no grid point is 50 from both ends (2500 is 20 from the sound after it).
        let samples = Self.stretches([1_000, 400, 1_000, 120, 1_000])
        let joiner = RecordingJoiner()
        let encoder = try ParallelEncoder(joiner: joiner, format: Self.format, jobs: 2, minimumPieceSeconds: 0)
        try Self.feed(samples, to: encoder, chunk: chunk)
        try encoder.finish()
        #expect(encoder.cuts == [1_200])
        #expect(joiner.made == [0, 1_200])
        #expect(joiner.appended == [.init(index: 0, start: 0, encoded: .init(samples: 1_200, keeping: 12)),
                                    .init(index: 1, start: 1_200, encoded: .init(samples: 2_320, keeping: nil))])
        #expect(joiner.finished == 3_520)
    }

    @Test("no cut closer than the minimum piece to the previous one; trailing silence goes to the last piece")
    func minimumPiece() throws {
        let samples = Self.stretches([1_000, 400, 1_000, 400, 1_000, 400, 1_000, 300])
        let joiner = RecordingJoiner()
        // 0.3 s at 8 kHz: 2,400 samples. Silences at 1000, 2400 and 3800 (400 each): the first is within 2,400 of the
        // start, the second takes a cut at its middle (2600), the third is within 2,400 of that cut.
        let encoder = try ParallelEncoder(joiner: joiner, format: Self.format, jobs: 3, minimumPieceSeconds: 0.3)
        try Self.feed(samples, to: encoder, chunk: 512)
        try encoder.finish()
        #expect(encoder.cuts == [2_600])
        #expect(joiner.appended.map(\.encoded) == [.init(samples: 2_600, keeping: 26), .init(samples: 2_900, keeping: nil)])
        #expect(joiner.finished == 5_500)
    }

    @Test("a piece's failure stops the render at the next write, long before the end")
    func failureReportedEarly() throws {
        let joiner = RecordingJoiner()
        joiner.failFirstAfter = 500
        let encoder = try ParallelEncoder(joiner: joiner, format: Self.format, jobs: 2, minimumPieceSeconds: 0)
        var caught: (any Error)?
        // The piece fails on its own queue: at the end of this write already, or within a few more.
        for attempt in 0..<500 {
            do {
                try Self.feed(attempt == 0 ? Self.stretches([1_000]) : [0.5], to: encoder, chunk: 1_000)
                Thread.sleep(forTimeInterval: 0.01)
            } catch {
                caught = error
                break
            }
        }
        let error = try #require(caught as? AudioError)
        #expect(error.code == .encodingFailed && error.reason == "failing as asked")
        #expect(joiner.appended.isEmpty && joiner.finished == nil)
    }
}

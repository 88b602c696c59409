import Foundation
import Testing

@testable import ChorusAudio

/// A joiner double: a 100-sample grid, 50-sample margins, overlapped cuts warming 2 frames and running on 3, codecs
/// that record what they are given (and fail on request), and a record of what `ParallelEncoder` appends, in order.
final class RecordingJoiner: PieceJoiner {
    final class Codec: PieceCodec {
        struct Encoded: Equatable {
            var samples: Int
            /// The first and last sample given.
            var first: Float?
            var last: Float?
        }

        private var samples = 0
        private var first: Float?
        private var last: Float?
        private let failAfter: Int?

        init(failAfter: Int?) { self.failAfter = failAfter }

        func encode(_ samples: UnsafeBufferPointer<Float>) throws {
            self.samples += samples.count
            first = first ?? samples.first
            last = samples.last ?? last
            if let failAfter, self.samples > failAfter {
                throw AudioError(.encodingFailed, subject: "piece", reason: "failing as asked")
            }
        }

        func finish() throws -> Encoded { Encoded(samples: samples, first: first, last: last) }
    }

    struct Appended: Equatable {
        var span: PieceSpan
        var samples: Int
    }

    let frameSize = 100
    let margin = 50
    let overlap = PieceOverlap(before: 2, after: 3)
    /// The first piece's codec fails once it has had more than this many samples.
    var failFirstAfter: Int?
    private(set) var made: [Int] = []
    private(set) var appended: [Appended] = []
    private(set) var finished: Int?

    func makeCodec(index: Int, start: Int) throws -> Codec {
        made.append(start)
        return Codec(failAfter: index == 0 ? failFirstAfter : nil)
    }

    private(set) var encoded: [Codec.Encoded] = []

    func append(_ encoded: Codec.Encoded, span: PieceSpan) throws {
        appended.append(Appended(span: span, samples: encoded.samples))
        self.encoded.append(encoded)
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

    @Test(
        "a cut on the grid nearest the middle of a long enough silence; none in one too short for two margins",
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
        #expect(
            joiner.appended == [
                .init(span: .init(index: 0, encoderStart: 0, start: 0, end: 1_200), samples: 1_200),
                .init(span: .init(index: 1, encoderStart: 1_200, start: 1_200, end: nil), samples: 2_320),
            ])
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
        #expect(joiner.appended.map(\.samples) == [2_600, 2_900])
        #expect(joiner.appended.map(\.span.end) == [2_600, nil])
        #expect(joiner.finished == 5_500)
    }

    /// A ramp with no silence: sample `i` is `(i + 1) / 100_000`, so a codec's first and last samples say where it began and ended.
    static func ramp(_ count: Int) -> [Float] { (0..<count).map { Float($0 + 1) / 100_000 } }

    @Test(
        "overlapped cuts (no silence): every minimum piece on the grid, each encoder warmed by the frames before its cut, the piece before given frames past it",
        arguments: [1, 37, 4_096])
    func overlappedCuts(chunk: Int) throws {
        let joiner = RecordingJoiner()
        // Pieces are at least 2 × (2 + 3) frames = 1,000 samples; 0.3 s at 8 kHz is 2,400.
        let encoder = try ParallelEncoder(joiner: joiner, format: Self.format, jobs: 2, cutting: .overlapped, minimumPieceSeconds: 0.3)
        try Self.feed(Self.ramp(6_000), to: encoder, chunk: chunk)
        try encoder.finish()
        #expect(encoder.cuts == [2_400, 4_800])
        #expect(joiner.made == [0, 2_200, 4_600])
        #expect(
            joiner.appended == [
                .init(span: .init(index: 0, encoderStart: 0, start: 0, end: 2_400), samples: 2_700),
                .init(span: .init(index: 1, encoderStart: 2_200, start: 2_400, end: 4_800), samples: 2_900),
                .init(span: .init(index: 2, encoderStart: 4_600, start: 4_800, end: nil), samples: 1_400),
            ])
        // Each codec was given the stream's own samples from where it started to where it stopped.
        #expect(joiner.encoded.map(\.first) == [0, 2_200, 4_600].map { Float($0 + 1) / 100_000 })
        #expect(joiner.encoded.map(\.last) == [2_700, 5_100, 6_000].map { Float($0) / 100_000 })
        #expect(joiner.finished == 6_000)
    }

    @Test(
        "overlapped: a stream ending inside a cut's overlap leaves that cut out (the piece before it has every sample); one too short for a piece is one piece"
    )
    func overlappedEndInsideOverlap() throws {
        for (length, cuts) in [(2_500, [Int]()), (2_000, []), (2_700, [2_400])] {
            let joiner = RecordingJoiner()
            let encoder = try ParallelEncoder(joiner: joiner, format: Self.format, jobs: 2, cutting: .overlapped, minimumPieceSeconds: 0.3)
            try Self.feed(Self.ramp(length), to: encoder, chunk: 512)
            try encoder.finish()
            #expect(encoder.cuts == cuts, "\(length)")
            #expect(joiner.appended.first?.samples == (cuts.isEmpty ? length : 2_700), "\(length)")
            #expect(joiner.appended.last?.span.end == nil && joiner.finished == length, "\(length)")
        }
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

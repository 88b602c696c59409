import ChorusTestSupport
import ChorusWire
import Foundation
import Testing

@testable import ChorusListening
@testable import ChorusSpeech

/// The pieces of Chorus's Whisper on their own: the FFT, the log-mel front end (against faster-whisper's), the word
/// alignment's median filter and time warping, the tokenizer's words, the decoder's timestamp rules and segment ends.
@Suite("Whisper's parts")
struct WhisperPartsTests {
    /// A repeatable signal: a few tones and noise.
    static func signal(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [Float] {
        var state = seed
        return (0..<count).map { index in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            let noise = Float(Double(state >> 11) / Double(1 << 53) - 0.5) * 0.05
            let t = Double(index) / 16_000
            return Float(0.3 * sin(2 * .pi * 220 * t) + 0.1 * sin(2 * .pi * 1_870 * t) * sin(2 * .pi * 3 * t)) + noise
        }
    }

    @Test("the FFT equals the discrete Fourier transform by its definition", arguments: [400, 16, 60, 100, 2, 5, 12])
    func fft(_ count: Int) {
        let input = Self.signal(2 * count)
        var data = input
        var work = [Float](repeating: 0, count: 2 * count)
        data.withUnsafeMutableBufferPointer { data in
            work.withUnsafeMutableBufferPointer { FFT(count: count).forward(data.baseAddress!, work: $0.baseAddress!) }
        }
        var largest = 0.0
        var scale = 0.0
        for k in 0..<count {
            var real = 0.0
            var imaginary = 0.0
            for n in 0..<count {
                let angle = -2 * Double.pi * Double(k * n) / Double(count)
                real += Double(input[2 * n]) * cos(angle) - Double(input[2 * n + 1]) * sin(angle)
                imaginary += Double(input[2 * n]) * sin(angle) + Double(input[2 * n + 1]) * cos(angle)
            }
            largest = max(largest, abs(real - Double(data[2 * k])), abs(imaginary - Double(data[2 * k + 1])))
            scale = max(scale, abs(real), abs(imaginary))
        }
        #expect(largest <= 1e-5 * max(1, scale), "\(count) points: off by \(largest) of \(scale)")
    }

    @Test("the mel filters and the log-mel features are faster-whisper's (within float rounding), silence after the audio zero")
    func features() async throws {
        for seconds in [3.7, 30.0] {
            let samples = Self.signal(Int(seconds * 16_000))
            let ours = WhisperFeatures(bands: 80).logMel(samples[...])
            let theirs = try await WhisperReferee.features(samples)
            let theirFrames = theirs.count / 80
            let heard = min(3000, theirFrames)
            #expect(theirFrames == samples.count / 160 + 1, "\(theirFrames) frames for \(samples.count) samples")
            var largest: Float = 0
            for band in 0..<80 {
                for frame in 0..<heard { largest = max(largest, abs(ours[band * 3000 + frame] - theirs[band * theirFrames + frame])) }
                for frame in heard..<3000 { #expect(ours[band * 3000 + frame] == 0) }
            }
            #expect(largest < 2e-4, "\(seconds) s: largest difference \(largest)")
        }
        let filters = WhisperFeatures.melFilters(bands: 80, rate: 16_000, fftSize: 400)
        #expect(filters.count == 80 && filters.allSatisfy { $0.first + $0.weights.count <= 201 && $0.weights.allSatisfy { $0 >= 0 } })
    }

    @Test("the median filter reflects at the ends; the time warping takes the cheapest monotonic path")
    func alignment() {
        #expect(WhisperAlignment.medianFiltered([5, 1, 9, 2, 8, 3, 7][...], width: 3) == [1, 5, 2, 8, 3, 7, 3])
        // Against the definition (sort the reflected window, take its middle), on values with ties, at every width used.
        var generator = WhisperDecoder.SplitMix(seed: 42)
        let values = (0..<500).map { _ in Float(generator.next() % 50) / 7 }
        for width in [1, 3, 7, 9] {
            let half = width / 2
            let expected = values.indices.map { index in
                (-half...half).map { offset -> Float in
                    var position = index + offset
                    if position < 0 { position = -position }
                    if position >= values.count { position = 2 * (values.count - 1) - position }
                    return values[position]
                }.sorted()[half]
            }
            #expect(WhisperAlignment.medianFiltered(values[...], width: width) == expected, "width \(width)")
            #expect(
                WhisperAlignment.medianFiltered(values[100..<300], width: width)
                    == WhisperAlignment.medianFiltered(Array(values[100..<300])[...], width: width))
        }
        // Three rows, six columns: cheap along row 0 for two columns, row 1 for three, row 2 for one.
        var cost = [Float](repeating: 1, count: 18)
        for (row, columns) in [(0, 0..<2), (1, 2..<5), (2, 5..<6)] { for column in columns { cost[row * 6 + column] = 0 } }
        let path = WhisperAlignment.warp(cost: cost, rows: 3, columns: 6)
        #expect(path.map(\.0) == [0, 0, 1, 1, 1, 2] && path.map(\.1) == [0, 1, 2, 3, 4, 5], "\(path)")
        // Attention that moves down the rows over time gives each row after the first the time it starts getting attention
        // (the path starts at the first frame), and the end of the last.
        let frames = 50
        let rows = 4
        let weights = (0..<2).map { _ in
            (0..<rows).flatMap { row in (0..<frames).map { frame -> Float in frame / 10 == row + 1 ? 1 : 0.001 } }
        }
        let times = WhisperAlignment.rowTimes(weights: weights, totalRows: rows, firstRow: 1, stride: frames, frames: frames)
        #expect(
            times.count == 4 && times[0] == 0 && abs(times[1] - 0.6) < 0.03 && abs(times[2] - 0.8) < 0.03 && abs(times[3] - 1.0) < 0.03, "\(times)")
    }

    @Test("tokens make words as OpenAI's Whisper makes them — a space starts one, punctuation joins its neighbour — and 4:30 stays one word")
    func words() throws {
        let pieces = ["Hello", ",", " world", ".", " (", "laughs", ")", " it", "'s", " 4", ":", "30", "!"]
        let table =
            pieces.enumerated().map { "\(Data($0.element.utf8).base64EncodedString()) \($0.offset)" }
            + (pieces.count..<300).map { "\(Data("x\($0)".utf8).base64EncodedString()) \($0)" }
        let tokenizer = try WhisperTokenizer(text: table.joined(separator: "\n"), endOfText: 300, name: "tokens")
        let split = tokenizer.words(of: Array(0..<pieces.count), language: "en")
        #expect(split.map(\.text) == ["Hello", ",", " world", ".", " (laughs", ")", " it's", " 4:30", "!"], "\(split.map(\.text))")
        let timed = split.enumerated().map { WordTiming(word: $1.text, start: Double($0), end: Double($0) + 0.5) }
        let merged = WhisperTokenizer.mergingPunctuation(timed)
        #expect(merged.map(\.word) == ["Hello,", " world.", " (laughs)", " it's", " 4:30!"], "\(merged.map(\.word))")
        #expect(merged.map(\.start) == [0, 2, 4, 6, 7])
        #expect(tokenizer.text(of: [0, 2, 3]) == "Hello world.")
        for bad in ["IQ== 0\nno\n", "IQ== 999\n", "IQ== 0\nIQ== 0\n"] {
            #expect(throws: VoiceError.self) { try WhisperTokenizer(text: bad, endOfText: 300, name: "tokens") }
        }
    }

    @Test("timestamps come in pairs and never go back; a stopped window is heard again from its last complete segment")
    func timestampRules() {
        let t = WhisperModel.Description.Tokens(
            eot: 10, sot: 11, translate: 12, transcribe: 13, sot_lm: 14, sot_prev: 15,
            no_speech: 16, no_timestamps: 17, timestamp_begin: 18)
        // Text likelier than any one timestamp, and than all of them together.
        func allowed(after sampled: [Int], _ logits: [Float] = [Float](repeating: 10, count: 18) + [Float](repeating: 0, count: 100)) -> Set<Int> {
            var logits = logits
            WhisperDecoder.applyRules(to: &logits, sampled: sampled, tokens: t)
            return Set(logits.indices.filter { logits[$0] > -.infinity })
        }
        // First: a timestamp within 1 s.
        #expect(allowed(after: []) == Set(18...68))
        // After a text token: anything but specials and timestamps before the last one.
        #expect(allowed(after: [18 + 5, 3]) == Set(0...10).union(18 + 6..<118))
        // Unless the timestamps together are likelier than the likeliest text token.
        #expect(allowed(after: [18 + 5, 3], [Float](repeating: 0, count: 18) + [Float](repeating: 0, count: 100)) == Set(18 + 6..<118))
        // After a timestamp ending a segment: another timestamp (its pair) or the end, not text.
        #expect(allowed(after: [18, 3, 18 + 7]) == Set([10]).union(18 + 7..<118))
        // After a pair: text or a later timestamp.
        #expect(allowed(after: [18, 3, 25, 25]).isSuperset(of: Set(0..<10)) && !allowed(after: [18, 3, 25, 25]).contains(25))
        // Segments: a window ending with a pair stopped early; one ending with a single timestamp is done.
        let stopped = WhisperDecoder.completeSegments([18, 1, 2, 18 + 100, 18 + 100, 3, 4], timestampBegin: 18, windowSamples: 480_000)
        #expect(stopped.tokens == [18, 1, 2, 18 + 100] && stopped.consumed == 100 * 320)
        let done = WhisperDecoder.completeSegments([18, 1, 2, 18 + 100, 18 + 100, 3, 18 + 200], timestampBegin: 18, windowSamples: 480_000)
        #expect(done.tokens.count == 7 && done.consumed == 480_000)
        #expect(WhisperDecoder.completeSegments([1, 2, 3], timestampBegin: 18, windowSamples: 9).consumed == 9)
        #expect(WhisperDecoder.withoutLoop([1, 2, 3, 4, 3, 4, 3, 4, 3, 4, 3, 4]) == [1, 2, 3, 4])
        #expect(WhisperDecoder.withoutLoop([1, 2, 3, 4, 3, 4]) == [1, 2, 3, 4, 3, 4])
    }

    @Test("the fallback's measures: a transcript repeating itself compresses over 2.4 times, speech does not; seeded draws repeat")
    func fallback() {
        #expect(WhisperDecoder.compressionRatio(String(repeating: "I'm going to the store. ", count: 12)) > WhisperDecoder.repeatsAbove)
        #expect(
            WhisperDecoder.compressionRatio("Practice moved to four thirty today. Can someone grab Maya from school?") < WhisperDecoder.repeatsAbove)
        #expect(WhisperDecoder.compressionRatio("") == 0)
        let logits: [Float] = [2, 1, 0.5, -.infinity, 0]
        func draws(_ seed: UInt64, _ temperature: Float) -> [Int] {
            var random = WhisperDecoder.SplitMix(seed: seed)
            return (0..<200).map { _ in WhisperDecoder.draw(logits, temperature: temperature, random: &random).0 }
        }
        #expect(draws(7, 1) == draws(7, 1) && draws(7, 1) != draws(8, 1))
        #expect(!draws(7, 1).contains(3), "a forbidden token is never drawn")
        // Hotter, flatter: the likeliest token is drawn less often at temperature 1 than at 0.2.
        #expect(draws(9, 1).filter { $0 == 0 }.count < draws(9, 0.2).filter { $0 == 0 }.count)
        var random = WhisperDecoder.SplitMix(seed: 1)
        let (token, logProbability) = WhisperDecoder.draw(logits, temperature: 0.2, random: &random)
        #expect(logits[token] > -.infinity && logProbability <= 0)
    }
}

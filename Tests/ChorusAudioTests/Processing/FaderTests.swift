import ChorusFixtures
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Fader")
struct FaderTests {
    @Test("edges rise from near zero over exactly the fade length, the middle is untouched, channels alike")
    func raisedCosine() {
        let format = AudioFormat(sampleRate: 10_000, channels: 2)
        var clip = AudioBuffer(format: format, samples: [Float](repeating: 1, count: 10_000 * 2))
        Fader(milliseconds: 5).apply(to: &clip)
        let length = 50
        let left = (0..<clip.frameCount).map { clip.samples[$0 * 2] }
        let right = (0..<clip.frameCount).map { clip.samples[$0 * 2 + 1] }
        #expect(left == right)
        #expect(left[0] > 0 && left[0] < 0.001)
        #expect(zip(left[0..<length], left[1...length]).allSatisfy { $0 < $1 }, "the fade-in rises")
        #expect(left[length...].prefix(10_000 - 2 * length).allSatisfy { $0 == 1 })
        #expect((0..<length).allSatisfy { abs(left[$0] - left[10_000 - 1 - $0]) < 1e-7 }, "the fade-out mirrors the fade-in")
        #expect(abs(left[length / 2] - 0.5) < 0.05, "half way up at the middle of the fade")
    }

    @Test("a clip shorter than two fades fades over half its length; lengths are capped at 10 ms")
    func shortClipsAndCap() {
        var short = AudioBuffer(format: .speech, samples: [Float](repeating: 1, count: 100))
        Fader(milliseconds: 5).apply(to: &short)
        #expect(short.samples[49] > 0.9 && short.samples[50] > 0.9 && short.samples[0] < 0.01 && short.samples[99] < 0.01)
        #expect(Fader(milliseconds: 500).milliseconds == 10 && Fader(milliseconds: -3).milliseconds == 0)
        var untouched = AudioBuffer(format: .speech, samples: [0.3, 0.3, 0.3])
        Fader(milliseconds: 0).apply(to: &untouched)
        #expect(untouched.samples == [0.3, 0.3, 0.3])
    }
}

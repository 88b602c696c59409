public import ChorusWire
import Foundation

/// Word times made sharp against the audio itself. Whisper's token times are often 100–200 ms off; where speech
/// starts after a pause, the audio says exactly when: a word the recognizer placed near the end of a pause starts
/// where the pause ends (5 ms resolution), and a word followed by a pause ends where the pause begins. Words inside
/// connected speech keep their times.
///
/// A pause is at least `minPause` of frames quieter than the speech level less `range` dB (and above the noise
/// floor by a margin), so quiet consonants at a word's edge count as speech and room noise does not.
public enum SpeechOnsets {
    /// A stretch of silence, seconds.
    public struct Pause: Sendable, Equatable {
        public var start: Double
        public var end: Double
    }

    /// Frame length, seconds.
    static let frame = 0.005

    /// The pauses of `samples` (mono at `rate`): silences of at least `minPause` seconds, the one before the first
    /// sound included (it starts at 0), the one after the last not (nothing starts there).
    public static func pauses(in samples: [Float], rate: Int, minPause: Double = 0.12, range: Float = 50) -> [Pause] {
        let size = max(1, Int(Double(rate) * frame))
        let frames = samples.count / size
        guard frames > 0 else { return [] }
        var levels = [Float](repeating: -120, count: frames)
        for index in 0..<frames {
            var sum: Float = 0
            for sample in samples[(index * size)..<((index + 1) * size)] { sum += sample * sample }
            levels[index] = 10 * log10(max(sum / Float(size), 1e-12))
        }
        let sorted = levels.sorted()
        let floor = max(sorted[frames / 10], -90)
        let loud = sorted[min(frames - 1, frames * 95 / 100)]
        let threshold = max(floor + 10, loud - range)
        let shortest = Int((minPause / frame).rounded(.up))
        var pauses: [Pause] = []
        var quietFrom: Int?
        for index in 0..<frames {
            if levels[index] < threshold {
                if quietFrom == nil { quietFrom = index }
            } else if let from = quietFrom {
                if index - from >= shortest || from == 0 {
                    pauses.append(Pause(start: Double(from * size) / Double(rate), end: Double(index * size) / Double(rate)))
                }
                quietFrom = nil
            }
        }
        return pauses
    }

    /// `words` (in order, times in seconds from the start of `samples`) with starts moved to the ends of pauses found
    /// within `reach` seconds of them and ends to the starts of pauses that follow them; order is kept, no two words
    /// take the same pause, and no word is moved past a neighbour.
    public static func refine(_ words: [WordTiming], samples: [Float], rate: Int, reach: Double = 0.35) -> [WordTiming] {
        guard !words.isEmpty, rate > 0 else { return words }
        let pauses = pauses(in: samples, rate: rate)
        guard !pauses.isEmpty else { return words }
        var result = words
        var nextPause = 0
        for index in result.indices {
            let word = result[index]
            let previousStart = index > 0 ? result[index - 1].start : -Double.infinity
            let nextStart = index + 1 < result.count ? words[index + 1].start : Double.infinity
            // A word the recognizer starts inside a pause starts where the pause ends (nothing is said in it); otherwise
            // the unused pause whose end is nearest its start, within reach, after the previous word's start.
            var best = (nextPause..<pauses.count).first {
                pauses[$0].start <= word.start && word.start < pauses[$0].end && pauses[$0].end > previousStart && pauses[$0].end < nextStart
            }
            for candidate in nextPause..<pauses.count where best == nil {
                let onset = pauses[candidate].end
                if onset > word.start + reach { break }
                guard onset >= word.start - reach, onset > previousStart, onset < max(nextStart, word.start + reach) else { continue }
                if best == nil || abs(onset - word.start) < abs(pauses[best!].end - word.start) { best = candidate }
            }
            guard let chosen = best else { continue }
            let pause = pauses[chosen]
            result[index].start = pause.end
            result[index].end = max(result[index].end, pause.end)
            if index > 0, pause.start > result[index - 1].start {
                result[index - 1].end = min(max(result[index - 1].end, result[index - 1].start), pause.start)
            }
            nextPause = chosen + 1
        }
        // Ends: a word followed by a pause before the next word ends where the pause begins.
        for index in result.indices {
            let start = result[index].start
            let limit = index + 1 < result.count ? result[index + 1].start : Double.infinity
            if let pause = pauses.first(where: { $0.start > start && $0.start < limit }) {
                result[index].end = pause.start
            } else {
                result[index].end = min(max(result[index].end, start), limit)
            }
        }
        return result
    }
}

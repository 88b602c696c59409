/// The pitch of speech: YIN's cumulative mean normalized difference on 40 ms frames every 20 ms, between 60 and
/// 400 Hz, on the frames loud enough to be voiced (within 30 dB of the loudest tenth).
enum Pitch {
    /// The median pitch in hertz of `samples` (mono at `rate`), `nil` when no frame is voiced.
    static func median(of samples: [Float], rate: Int) -> Double? {
        let frame = rate * 40 / 1000
        let hop = rate * 20 / 1000
        let shortest = rate / 400
        let longest = rate / 60
        guard samples.count >= frame + longest else { return nil }
        let starts = Array(stride(from: 0, to: samples.count - frame - longest, by: hop))
        let energies = starts.map { start -> Float in
            var sum: Float = 0
            for index in start..<(start + frame) { sum += samples[index] * samples[index] }
            return sum / Float(frame)
        }
        let loud = energies.sorted()[Int(Double(energies.count - 1) * 0.9)]
        guard loud > 1e-8 else { return nil }
        var pitches: [Double] = []
        var difference = [Float](repeating: 0, count: longest + 1)
        for (start, energy) in zip(starts, energies) where energy > loud * 0.001 {
            var running: Float = 0
            var found: Double?
            for lag in 1...longest {
                var sum: Float = 0
                for index in start..<(start + frame) {
                    let delta = samples[index] - samples[index + lag]
                    sum += delta * delta
                }
                running += sum
                difference[lag] = running > 0 ? sum * Float(lag) / running : 1
            }
            var lag = shortest
            while lag < longest {
                if difference[lag] < 0.15 {
                    while lag + 1 < longest, difference[lag + 1] < difference[lag] { lag += 1 }
                    // A parabola through the dip's three values places it between samples.
                    let (a, b, c) = (Double(difference[lag - 1]), Double(difference[lag]), Double(difference[lag + 1]))
                    let bend = a - 2 * b + c
                    found = Double(rate) / (Double(lag) + (bend > 0 ? 0.5 * (a - c) / bend : 0))
                    break
                }
                lag += 1
            }
            if let found { pitches.append(found) }
        }
        guard !pitches.isEmpty else { return nil }
        return pitches.sorted()[pitches.count / 2]
    }
}

public import ChorusAudio

/// Median fundamental of voiced 40 ms frames, by autocorrelation (70–400 Hz).
public func medianPitch(_ buffer: AudioBuffer) -> Double {
    let rate = buffer.format.sampleRate
    let frame = rate / 25
    let samples = buffer.samples
    let peak = buffer.peak
    var pitches: [Double] = []
    var start = 0
    while start + frame * 2 < samples.count {
        let window = Array(samples[start..<(start + frame * 2)])
        let energy = window.reduce(0) { $0 + $1 * $1 }
        if window.map(abs).max() ?? 0 > peak * 0.3 {
            var best = 0
            var bestValue: Float = 0
            for lag in (rate / 400)...(rate / 70) {
                var sum: Float = 0
                for index in 0..<frame { sum += window[index] * window[index + lag] }
                if sum > bestValue {
                    bestValue = sum
                    best = lag
                }
            }
            if bestValue > energy * 0.3 * 0.5, best > 0 { pitches.append(Double(rate) / Double(best)) }
        }
        start += frame
    }
    pitches.sort()
    return pitches.isEmpty ? 0 : pitches[pitches.count / 2]
}

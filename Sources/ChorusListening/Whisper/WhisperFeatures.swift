import Foundation

/// Whisper's input: the log-mel spectrogram of a window of up to 30 s of audio at 16 kHz, as faster-whisper computes
/// it — the audio and 10 ms of silence, reflected at both ends, a 400-point periodic Hann window every 160 samples, the
/// power of each bin, Slaney-scaled mel filters (librosa's, as Whisper's `mel_filters.npz` holds them), log10 with a
/// floor of 1e-10, no value more than 8 below the largest, then (x + 4) / 4 — and zeros for the frames after the audio
/// (faster-whisper's `pad_or_trim` of the features). OpenAI's `transcribe` pads the audio with silence instead, whose
/// features are the floor, not zero: measured on tiny.en, the zeros hear short clips better ("John chapter 3, verse
/// 16" where the floor lost "chapter"), and they are what faster-whisper, the peer Chorus is measured against, gives
/// the same weights. Checked against faster-whisper's feature extractor in the tests.
struct WhisperFeatures: Sendable {
    /// Mel bands (80; 128 for large-v3).
    let bands: Int
    static let fftSize = 400
    static let hop = 160
    /// Frames of one window (30 s).
    static let frames = 3000
    /// Samples of one window.
    static let samples = frames * hop

    private let fft = FFT(count: fftSize)
    private let window: [Float]
    /// Each band's first bin and weights (the filters are triangles: a few bins each).
    private let filters: [(first: Int, weights: [Float])]

    init(bands: Int) {
        self.bands = bands
        window = (0..<Self.fftSize).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(Self.fftSize))) }
        filters = Self.melFilters(bands: bands, rate: 16_000, fftSize: Self.fftSize)
    }

    /// The features of `samples` (mono, 16 kHz, at most 30 s: more is not heard): `bands` rows of `frames` values.
    func logMel(_ samples: ArraySlice<Float>) -> [Float] {
        let length = min(samples.count, Self.samples)
        let padded = length + Self.hop  // the audio and 10 ms of silence, as faster-whisper pads it
        let base = samples.startIndex
        let bins = Self.fftSize / 2 + 1
        let heard = min(Self.frames, padded / Self.hop)
        var mel = [Float](repeating: 0, count: bands * Self.frames)
        var frame = [Float](repeating: 0, count: 2 * Self.fftSize)
        var work = [Float](repeating: 0, count: 2 * Self.fftSize)
        var power = [Float](repeating: 0, count: bins)
        /// Sample `position` of the padded audio, reflected at both ends (numpy's `reflect`).
        func sample(_ position: Int) -> Float {
            var position = position
            while position < 0 || position >= padded {
                position = position < 0 ? -position : 2 * (padded - 1) - position
            }
            return position < length ? samples[base + position] : 0
        }
        frame.withUnsafeMutableBufferPointer { frame in
            work.withUnsafeMutableBufferPointer { work in
                for index in 0..<heard {
                    let first = index * Self.hop - Self.fftSize / 2
                    let inside = first >= 0 && first + Self.fftSize <= length
                    for j in 0..<Self.fftSize {
                        frame[2 * j] = (inside ? samples[base + first + j] : sample(first + j)) * window[j]
                        frame[2 * j + 1] = 0
                    }
                    fft.forward(frame.baseAddress!, work: work.baseAddress!)
                    for bin in 0..<bins {
                        power[bin] = frame[2 * bin] * frame[2 * bin] + frame[2 * bin + 1] * frame[2 * bin + 1]
                    }
                    for (band, filter) in filters.enumerated() {
                        var sum: Float = 0
                        for (offset, weight) in filter.weights.enumerated() { sum += weight * power[filter.first + offset] }
                        mel[band * Self.frames + index] = sum
                    }
                }
            }
        }
        var largest = -Float.infinity
        for band in 0..<bands {
            for index in 0..<heard {
                let value = log10(max(mel[band * Self.frames + index], 1e-10))
                mel[band * Self.frames + index] = value
                largest = max(largest, value)
            }
        }
        let floor = largest - 8
        for band in 0..<bands {
            for index in 0..<heard { mel[band * Self.frames + index] = (max(mel[band * Self.frames + index], floor) + 4) / 4 }
        }
        return mel
    }

    /// librosa's `mel(sr: rate, n_fft: fftSize, n_mels: bands)` (Slaney's scale and area normalization), each band as
    /// its non-zero run of weights.
    static func melFilters(bands: Int, rate: Int, fftSize: Int) -> [(first: Int, weights: [Float])] {
        let linearStep = 200.0 / 3
        let logStart = 1000.0
        let logStartMel = logStart / linearStep
        let logStep = log(6.4) / 27
        func mel(_ hertz: Double) -> Double { hertz < logStart ? hertz / linearStep : logStartMel + log(hertz / logStart) / logStep }
        func hertz(_ mel: Double) -> Double { mel < logStartMel ? mel * linearStep : logStart * exp(logStep * (mel - logStartMel)) }
        let bins = fftSize / 2 + 1
        let frequencies = (0..<bins).map { Double($0) * Double(rate) / Double(fftSize) }
        let top = mel(Double(rate) / 2)
        let edges = (0..<(bands + 2)).map { hertz(top * Double($0) / Double(bands + 1)) }
        return (0..<bands).map { band in
            let lower = edges[band]
            let center = edges[band + 1]
            let upper = edges[band + 2]
            let scale = 2 / (upper - lower)
            let weights = frequencies.map { frequency -> Float in
                let rising = (frequency - lower) / (center - lower)
                let falling = (upper - frequency) / (upper - center)
                return Float(max(0, min(rising, falling)) * scale)
            }
            let first = weights.firstIndex { $0 > 0 } ?? 0
            let last = weights.lastIndex { $0 > 0 } ?? 0
            return (first, Array(weights[first...max(first, last)]))
        }
    }
}

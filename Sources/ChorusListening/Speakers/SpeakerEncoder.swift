import ChorusInference
import ChorusSpeech
import ChorusSupport
public import Foundation

/// Who is speaking, as 256 numbers: `SpeakerModel` (Resemblyzer's GE2E encoder) run on ONNX Runtime. Two recordings
/// of one person give embeddings whose cosine `similarity` is high (about 0.8 and more), two people's lower. Computed as
/// Resemblyzer's `embed_utterance` computes it: the audio at 16 kHz, padded with zeros to whole partials, its mel power
/// spectrogram (`features`), a partial embedding for every 1.6 s of frames (a partial every 77 frames; the last one
/// dropped when it would hear less than three quarters audio), their mean made unit length. Checked against
/// Resemblyzer's features and a NumPy reimplementation of its network on real speech in the tests.
/// Calls may come from several threads at once.
public final class SpeakerEncoder: Sendable {
    /// The name its errors give.
    static let owner = "speaker-encoder"
    public let model: SpeakerModel
    private let session: InferenceSession
    private let fft = FFT(count: SpeakerModel.fftSize)
    private let window: [Float]
    private let filters: [(first: Int, weights: [Float])]

    /// Loads `model` on the caller's thread (a fraction of a second: 5.6 MB of weights); each call runs on its
    /// caller's thread alone.
    /// - Throws: `VoiceError` (`.configuration`) naming the file when the runtime refuses it or its input and output
    ///   are not a prepared speaker model's.
    public init(model: SpeakerModel) throws {
        self.model = model
        guard let bytes = try? Data(contentsOf: model.model, options: .alwaysMapped) else {
            throw SpeakerModel.broken("\(model.model.path): cannot be read")
        }
        let file = model.model
        session = try VoiceError.inference(Self.owner) {
            let session = try InferenceSession(file: file, bytes: bytes, threads: .own(1), owner: Self.owner)
            try session.expect(
                inputs: [.float("mels", [-1, -1, SpeakerModel.bands])], outputs: [.float("embedding", [-1, SpeakerModel.width])])
            return session
        }
        let size = SpeakerModel.fftSize
        window = (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size))) }
        filters = WhisperFeatures.melFilters(bands: SpeakerModel.bands, rate: SpeakerModel.sampleRate, fftSize: size)
    }

    /// The process's encoder of the model in `folder`, loaded once (and again when its files change).
    /// - Throws: `VoiceError` (`.configuration`) naming the file and the reason.
    public static func shared(folder: URL = SpeakerModel.folder()) throws -> SpeakerEncoder {
        let stamp = ModelFolder.contents(of: folder)
        return try loaded.withLock { loaded in
            if let known = loaded, known.folder == folder.path, known.stamp == stamp { return known.encoder }
            let encoder = try SpeakerEncoder(model: SpeakerModel(folder: folder))
            loaded = (folder.path, stamp, encoder)
            return encoder
        }
    }

    private static let loaded = Locked<(folder: String, stamp: [String], encoder: SpeakerEncoder)?>(nil)

    /// The unit-length embedding of `samples` (mono, 16 kHz).
    /// - Throws: `VoiceError` (`.badRequest`) when there are no samples; `.unavailable` when the runtime fails.
    public func embedding(of samples: [Float]) throws -> [Float] {
        guard !samples.isEmpty else {
            throw VoiceError(.badRequest, provider: Self.owner, message: "no audio to hear a voice in")
        }
        let partials = Self.partials(samples: samples.count)
        let length = partials[partials.count - 1].upperBound * SpeakerModel.hop
        let padded = samples.count < length ? samples + [Float](repeating: 0, count: length - samples.count) : samples
        let mel = features(padded)
        var batch: [Float] = []
        batch.reserveCapacity(partials.count * SpeakerModel.partialFrames * SpeakerModel.bands)
        for partial in partials { batch += mel[(partial.lowerBound * SpeakerModel.bands)..<(partial.upperBound * SpeakerModel.bands)] }
        let embeddings = try VoiceError.inference(Self.owner) {
            try session.run(
                [("mels", try Tensor(shape: [partials.count, SpeakerModel.partialFrames, SpeakerModel.bands], values: batch))],
                outputs: ["embedding"])[0].floatArray
        }
        var mean = [Float](repeating: 0, count: SpeakerModel.width)
        for index in 0..<partials.count {
            for value in 0..<SpeakerModel.width { mean[value] += embeddings[index * SpeakerModel.width + value] }
        }
        return Self.unit(mean)
    }

    /// The frames of each partial embedding of `samples` samples, as Resemblyzer's `compute_partial_slices` gives them
    /// (rate 1.3, coverage 0.75).
    static func partials(samples: Int) -> [Range<Int>] {
        let frames = Int((Double(samples + 1) / Double(SpeakerModel.hop)).rounded(.up))
        let steps = max(1, frames - SpeakerModel.partialFrames + SpeakerModel.partialStep + 1)
        var partials = stride(from: 0, to: steps, by: SpeakerModel.partialStep).map { $0..<($0 + SpeakerModel.partialFrames) }
        if let last = partials.last, partials.count > 1 {
            let start = last.lowerBound * SpeakerModel.hop
            let coverage = Double(samples - start) / Double(SpeakerModel.partialFrames * SpeakerModel.hop)
            if coverage < 0.75 { partials.removeLast() }
        }
        return partials
    }

    /// The mel power spectrogram of `samples`, frame after frame (`bands` values each): as librosa's `melspectrogram`
    /// with a 400-point periodic Hann window every 160 samples, centred (the audio reflected 200 samples at both
    /// ends), the power of each bin, Slaney-scaled mel filters (Whisper's, `WhisperFeatures.melFilters`).
    func features(_ samples: [Float]) -> [Float] {
        let size = SpeakerModel.fftSize
        let half = size / 2
        let bands = SpeakerModel.bands
        let count = samples.count
        let frames = 1 + count / SpeakerModel.hop
        var mel = [Float](repeating: 0, count: frames * bands)
        var frame = [Float](repeating: 0, count: 2 * size)
        var work = [Float](repeating: 0, count: 2 * size)
        var power = [Float](repeating: 0, count: half + 1)
        /// Sample `position`, reflected at both ends (numpy's `reflect`).
        func sample(_ position: Int) -> Float {
            guard count > 1 else { return count == 1 ? samples[0] : 0 }
            var position = position
            while position < 0 || position >= count { position = position < 0 ? -position : 2 * (count - 1) - position }
            return samples[position]
        }
        frame.withUnsafeMutableBufferPointer { frame in
            work.withUnsafeMutableBufferPointer { work in
                for index in 0..<frames {
                    let first = index * SpeakerModel.hop - half
                    let inside = first >= 0 && first + size <= count
                    for j in 0..<size {
                        frame[2 * j] = (inside ? samples[first + j] : sample(first + j)) * window[j]
                        frame[2 * j + 1] = 0
                    }
                    fft.forward(frame.baseAddress!, work: work.baseAddress!)
                    for bin in 0...half { power[bin] = frame[2 * bin] * frame[2 * bin] + frame[2 * bin + 1] * frame[2 * bin + 1] }
                    for (band, filter) in filters.enumerated() {
                        var sum: Float = 0
                        for (offset, weight) in filter.weights.enumerated() { sum += weight * power[filter.first + offset] }
                        mel[index * bands + band] = sum
                    }
                }
            }
        }
        return mel
    }

    /// The cosine similarity of two embeddings (1: the same direction).
    public static func similarity(_ a: [Float], _ b: [Float]) -> Double {
        var dot = 0.0
        var aa = 0.0
        var bb = 0.0
        for (x, y) in zip(a, b) {
            dot += Double(x) * Double(y)
            aa += Double(x) * Double(x)
            bb += Double(y) * Double(y)
        }
        return aa > 0 && bb > 0 ? dot / (aa * bb).squareRoot() : 0
    }

    /// `values` divided by their length (zeros stay zeros).
    public static func unit(_ values: [Float]) -> [Float] {
        let length = values.reduce(0.0) { $0 + Double($1) * Double($1) }.squareRoot()
        return length > 0 ? values.map { Float(Double($0) / length) } : values
    }

    /// The unit-length mean of `embeddings`: the voice several recordings share.
    public static func mean(_ embeddings: [[Float]]) -> [Float] {
        var sum = [Float](repeating: 0, count: SpeakerModel.width)
        for embedding in embeddings { for index in sum.indices where index < embedding.count { sum[index] += embedding[index] } }
        return unit(sum)
    }
}

import ChorusAudio
import ChorusListening
import ChorusSpeech
import ChorusSupport
import Foundation

/// The search for a Kokoro style the speaker model hears as a person. A candidate is a stock voice's style (or an
/// equal blend of two) with one row of 256 numbers added to each of its 510 rows, so a voice found on two sentences
/// carries over to every length. It is heard speaking two sentences of different lengths and scored: its
/// similarity to the person, less a penalty for a median pitch more than 10 % from theirs and one for an offset
/// larger than the stock voices differ from each other (beyond them lie artefacts the speaker model does not hear).
/// The stock voices and their blends are heard first; then an evolution strategy moves the offset from the best of
/// them: 8 candidates a generation (4 mirrored pairs), each value's step scaled by how much it varies between the
/// stock voices, the next generation centred on the best 4's weighted mean, the step widened after a generation that
/// found a better voice and narrowed after one that did not.
struct StyleSearch: Sendable {
    /// The language the sentences are read in.
    static let language = "en-us"
    /// The median pitch from which a voice sounds female.
    static let femalePitch = 165.0
    /// What candidates say: two sentences of different lengths, different rows of a style.
    static let text = "I'll call you when I get home. The garden looked wonderful after the rain."
    static let generation = 8

    let workbench: KokoroWorkbench
    let encoder: SpeakerEncoder
    let target: Enrolment
    let sounds: VoiceSound
    let sentences: [String]
    /// The voices the search starts from (the voices folder's, made voices left out), by name.
    let stock: [(name: String, style: [Float])]
    /// How much each of a row's 256 values varies between the stock voices (its standard deviation, over the rows).
    let spread: [Float]

    /// One voice heard: its style, how it was made (a stock voice or blend, `base`, and the `offset` added to each row),
    /// and its scores.
    struct Candidate: Sendable {
        var style: [Float]
        var base: String
        var offset: [Float]?
        var similarity: Double
        var pitch: Double
        var score: Double
    }

    /// What a search found: its best candidates, best first (`finalists` distinct voices).
    struct Found: Sendable {
        var finalists: [Candidate]
        var nearestStock: (name: String, similarity: Double)
        var heard: Int
    }

    /// Candidates kept for the final choice.
    static let finalists = 4

    init(workbench: KokoroWorkbench, encoder: SpeakerEncoder, target: Enrolment, sounds: VoiceSound) async throws {
        self.workbench = workbench
        self.encoder = encoder
        self.target = target
        self.sounds = sounds
        sentences = try await workbench.sentences(of: Self.text, language: Self.language)
        let made = MadeVoices.records(in: workbench.model.voicesFolder)
        stock = workbench.voices.filter { made[$0.key] == nil }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        guard !stock.isEmpty else {
            throw VoiceError(
                .configuration, provider: BuiltInProvider.kokoro.rawValue,
                message: "\(workbench.model.voicesFolder.path): no stock Kokoro voice to start a made voice from; run scripts/setup.sh")
        }
        let width = KokoroModel.styleWidth
        var spread = [Float](repeating: 0, count: width)
        if stock.count > 1 {
            for index in 0..<KokoroWorkbench.styleSize {
                let values = stock.map { Double($0.style[index]) }
                let mean = values.reduce(0, +) / Double(values.count)
                let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1)
                spread[index % width] += Float(variance.squareRoot() / Double(KokoroModel.styleRows))
            }
        } else {
            spread = [Float](repeating: 0.05, count: width)
        }
        self.spread = spread
    }

    /// `style` heard: spoken, resampled to the speaker model's rate, its embedding and pitch, scored.
    func hear(_ style: [Float], base: String, offset: [Float]? = nil) async throws -> Candidate {
        let spoken = try await workbench.speak(sentences, style: style)
        let encoder = self.encoder
        let (embedding, pitch) = try await workbench.onSpeechThreads {
            let resampler = try Resampler(
                from: AudioFormat(sampleRate: KokoroModel.sampleRate, channels: 1), to: AudioFormat(sampleRate: SpeakerModel.sampleRate, channels: 1))
            var samples: [Float] = []
            try spoken.withUnsafeBufferPointer { try resampler.convert($0, into: &samples) }
            try resampler.flush(into: &samples)
            return (try encoder.embedding(of: samples), Pitch.median(of: samples, rate: SpeakerModel.sampleRate) ?? 0)
        }
        let similarity = SpeakerEncoder.similarity(embedding, target.embedding)
        let pitchOff = pitch > 0 ? abs(log(pitch / target.pitch)) : 1
        var score = similarity - max(0, pitchOff - log(1.1))
        if let offset {
            let size = zip(offset, spread).reduce(0.0) { $0 + Double($1.0 / max($1.1, 1e-6)) * Double($1.0 / max($1.1, 1e-6)) }
            score -= 0.05 * max(0, (size / Double(offset.count)).squareRoot() - 1)
        }
        return Candidate(style: style, base: base, offset: offset, similarity: similarity, pitch: pitch, score: score)
    }

    /// Hears `styles` at once (the neural voices' threads take them in turn), in order.
    func hear(_ styles: [(style: [Float], base: String, offset: [Float]?)]) async throws -> [Candidate] {
        try await withThrowingTaskGroup(of: (Int, Candidate).self) { group in
            for (index, item) in styles.enumerated() {
                group.addTask { (index, try await hear(item.style, base: item.base, offset: item.offset)) }
            }
            var heard = [Candidate?](repeating: nil, count: styles.count)
            for try await (index, candidate) in group { heard[index] = candidate }
            return heard.compactMap { $0 }
        }
    }

    /// Searches with `candidates` voices heard in all.
    func run(seed: UInt64, candidates: Int, progress: @escaping @Sendable (VoiceMaker.Progress) -> Void) async throws -> Found {
        // The stock voices, then equal blends of two.
        var starts: [(name: String, style: [Float])] = stock
        for first in stock.indices {
            for second in stock.indices where second > first {
                starts.append(("\(stock[first].name)+\(stock[second].name)", zip(stock[first].style, stock[second].style).map { ($0 + $1) / 2 }))
            }
        }
        // About half the budget on them, at most all of them, leaving an even number for the mirrored pairs.
        var count = max(1, min(starts.count, candidates / 2))
        if (candidates - count) % 2 == 1 { count += count < starts.count ? 1 : -1 }
        starts = Array(starts.prefix(max(1, count)))
        let heardStarts = try await hear(starts.map { ($0.style, $0.name, nil) })
        var heard = heardStarts.count
        let bestIndex = heardStarts.indices.max { heardStarts[$0].score < heardStarts[$1].score }!
        var best = heardStarts[bestIndex]
        var kept = heardStarts
        let stockHeard = heardStarts.prefix(stock.count)
        let nearest = stockHeard.indices.max { stockHeard[$0].similarity < stockHeard[$1].similarity }!
        progress(VoiceMaker.Progress(done: heard, total: candidates, best: best.similarity))
        let base = starts[bestIndex].style
        let startedFrom = starts[bestIndex].name

        let width = KokoroModel.styleWidth
        var random = SplitMix64(seed: seed)
        var mean = [Double](repeating: 0, count: width)
        var step = 0.6
        let parents = Self.generation / 2
        let weights: [Double] = {
            let raw = (0..<parents).map { log(Double(parents) + 0.5) - log(Double($0) + 1) }
            let total = raw.reduce(0, +)
            return raw.map { $0 / total }
        }()
        while heard + 2 <= candidates {
            try Task.checkCancellation()
            let pairs = min(Self.generation, candidates - heard) / 2
            var offsets: [[Float]] = []
            for _ in 0..<pairs {
                let z = (0..<width).map { _ in random.normal() }
                for sign in [1.0, -1.0] {
                    offsets.append((0..<width).map { Float(mean[$0] + sign * step * z[$0] * Double(spread[$0])) })
                }
            }
            let styles = offsets.map { offset in
                (style: KokoroVoices.style(base: base, offset: offset), base: startedFrom, offset: Optional(offset))
            }
            let generation = try await hear(styles)
            heard += generation.count
            kept = Array((kept + generation).sorted { $0.score > $1.score }.prefix(Self.finalists))
            let ranked = generation.indices.sorted { generation[$0].score > generation[$1].score }
            if generation[ranked[0]].score > best.score {
                best = generation[ranked[0]]
                step = min(step * 1.15, 1.5)
            } else {
                step = max(step * 0.8, 0.05)
            }
            var next = [Double](repeating: 0, count: width)
            for (rank, index) in ranked.prefix(parents).enumerated() {
                let weight = weights[min(rank, weights.count - 1)] / weights.prefix(min(parents, ranked.count)).reduce(0, +)
                for value in 0..<width { next[value] += weight * Double(offsets[index][value]) }
            }
            mean = next
            progress(VoiceMaker.Progress(done: heard, total: candidates, best: best.similarity))
        }
        let finalists = Array(kept.sorted { $0.score > $1.score }.prefix(Self.finalists))
        return Found(finalists: finalists, nearestStock: (stock[nearest].name, stockHeard[nearest].similarity), heard: heard)
    }
}

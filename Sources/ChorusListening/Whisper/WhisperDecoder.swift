import ChorusInference
import ChorusSpeech
import ChorusWire
import Foundation

/// One lane's decoding, token by token, as OpenAI's Whisper and faster-whisper decode: greedy, and sampled again at
/// rising temperatures when the greedy result repeats itself or is unsure (their fallback, seeded by the window so the
/// same audio gives the same words); timestamps on (their rules: in pairs, never going back, the first within 1 s, a
/// timestamp whenever timestamps together are likelier than any word). The self-attention cache stays in place: each
/// step's keys and values are written into it at their positions, the decoder reads what it holds, and nothing is
/// copied in and out of the network at each step. The words are then timed by one more pass over the text without
/// timestamps (the alignment heads' attention, as OpenAI's `find_alignment`). Up to `batch` pieces are decoded side by
/// side, a step for all of them at once (a step reads every weight once, whatever the batch): each gives exactly what it
/// gives alone, as the converter scales every token's int8 products on their own. Used by one thread at a time (its lane's).
final class WhisperDecoder: @unchecked Sendable {
    let networks: WhisperNetworks
    /// Each layer's self-attention keys, then each layer's values: the cache, written in place.
    let cache: [Tensor<Float>]
    /// Positions the cache holds.
    let capacity: Int
    /// The token that is a space alone (never the first token: OpenAI's `suppress_blank`).
    private let blank: Int?

    /// Tokens decoded at most per piece (OpenAI's `sample_len`: half the text context).
    var mostTokens: Int { networks.model.description.n_text_ctx / 2 }

    /// The latest a piece's first timestamp may be (OpenAI's `max_initial_timestamp`: 1 s, in 20 ms steps).
    static let latestFirstTimestamp = 50

    init(networks: WhisperNetworks) throws {
        self.networks = networks
        let d = networks.model.description
        let capacity = d.n_text_ctx
        self.capacity = capacity
        blank = networks.tokenizer.bytes(of: 220) == [0x20] ? 220 : nil
        cache = try VoiceError.inference("whisper") { try (0..<(2 * d.n_text_layer)).map { _ in try Tensor(shape: [1, capacity, d.n_text_state]) } }
    }

    /// What a piece said.
    struct Piece: Sendable {
        /// Its text tokens (no special tokens, no timestamps).
        var tokens: [Int]
        /// The language it was heard in (ISO 639-1).
        var language: String
        /// The probability that it holds no speech (Whisper's `<|nospeech|>` at the start).
        var noSpeech: Float
        /// The mean log-probability of its tokens (and of the end of text).
        var averageLogProbability: Float
        /// Each word with its times in seconds from the piece's start (leading spaces kept).
        var words: [WordTiming]

        static let empty = Piece(tokens: [], language: "", noSpeech: 1, averageLogProbability: 0, words: [])

        /// Adds what a window heard `offset` seconds into the piece (`length` seconds long), unless it was silent: no
        /// speech likely and nothing said with confidence.
        fileprivate mutating func add(_ window: Window, at offset: Double, length: Double) {
            if language.isEmpty { language = window.language }
            if tokens.isEmpty { noSpeech = window.noSpeech }
            guard !window.isSilent, !window.tokens.isEmpty else { return }
            averageLogProbability =
                (averageLogProbability * Float(tokens.count) + window.averageLogProbability * Float(window.tokens.count))
                / Float(tokens.count + window.tokens.count)
            tokens += window.tokens
            // Within the audio: the encoder's last frame can reach 20 ms past it.
            words += window.words.map { WordTiming(word: $0.word, start: min($0.start + offset, length), end: min($0.end + offset, length)) }
        }
    }

    /// The most windows decoded together (`decode(_:language:)`): one decoder step for four costs 1.8 times one for
    /// one (tiny.en, one thread: the step reads every weight once, whatever the batch), and four windows' encoder
    /// outputs are what one lane holds at once (tiny.en 18 MB each, base 37 MB).
    static let batch = 4

    /// Decodes pieces (mono 16 kHz), up to `batch` of them side by side: each a 30 s window from its start, and, as
    /// OpenAI's `transcribe` seeks, another from where the last complete segment ended whenever Whisper stopped before
    /// the window's end without saying that nothing more is said (a single timestamp at the end). The pieces' n-th
    /// windows are encoded and decoded together, step by step; a window whose greedy result needs the temperature
    /// fallback goes through it alone, on its own part of the encoder's output. A silent window (`Window.isSilent`) is
    /// passed over.
    /// - Parameters:
    ///   - language: The language to transcribe them as; `nil` to detect it (multilingual models: each piece's from
    ///     its first window, kept for the rest of the piece).
    ///   - recordings: For a piece that is several recordings laid side by side (`WhisperRecognizer.transcribe(together:)`),
    ///     where each after the first starts (samples from the piece's start): whether a text repeats itself is judged
    ///     per recording, so that people saying the same thing in different messages is not taken for a loop.
    /// - Throws: `VoiceError` (`.unavailable`) when the runtime fails.
    func decode(_ pieces: [ArraySlice<Float>], language: String?, recordings: [[Int]]? = nil) throws -> [Piece] {
        try VoiceError.inference("whisper") { try decodeAll(pieces, language: language, recordings: recordings) }
    }

    /// `decode`, the runtime's failures not yet said as `VoiceError`s.
    private func decodeAll(_ pieces: [ArraySlice<Float>], language: String?, recordings: [[Int]]?) throws -> [Piece] {
        var heard: [Piece] = []
        for start in stride(from: 0, to: pieces.count, by: Self.batch) {
            let end = min(pieces.count, start + Self.batch)
            heard += try decodeTogether(Array(pieces[start..<end]), language: language, recordings: recordings.map { Array($0[start..<end]) })
        }
        return heard
    }

    /// At most `batch` pieces, their windows in rounds: the n-th window of every piece not yet heard to its end, together.
    private func decodeTogether(_ pieces: [ArraySlice<Float>], language: String?, recordings: [[Int]]?) throws -> [Piece] {
        var seeks = pieces.map(\.startIndex)
        var heard = pieces.map { _ in Piece(tokens: [], language: language ?? "", noSpeech: 1, averageLogProbability: 0, words: []) }
        var languages = [String?](repeating: language, count: pieces.count)
        while true {
            let open = pieces.indices.filter { pieces[$0].endIndex - seeks[$0] >= WhisperFeatures.hop }
            guard !open.isEmpty else { break }
            let windows = open.map { pieces[$0][seeks[$0]..<min(pieces[$0].endIndex, seeks[$0] + WhisperFeatures.samples)] }
            // Where recordings start inside each window, from the window's start.
            let cuts = open.enumerated().map { number, index in
                let from = seeks[index] - pieces[index].startIndex
                return (recordings?[index] ?? []).map { $0 - from }.filter { $0 > 0 && $0 < windows[number].count }
            }
            let results = try decodeWindows(windows, languages: open.map { languages[$0] }, cuts: cuts)
            for (number, index) in open.enumerated() {
                let samples = pieces[index]
                let window = windows[number]
                let result = results[number]
                languages[index] = languages[index] ?? result.language
                heard[index].add(
                    result, at: Double(seeks[index] - samples.startIndex) / Double(WhisperRecognizer.sampleRate),
                    length: Double(samples.count) / Double(WhisperRecognizer.sampleRate))
                seeks[index] += result.isSilent ? window.count : max(WhisperFeatures.hop, min(window.count, result.consumed))
            }
        }
        return heard
    }

    /// What one window said, and how many of its samples that covers.
    fileprivate struct Window {
        var tokens: [Int]
        var language: String
        var noSpeech: Float
        var averageLogProbability: Float
        var words: [WordTiming]
        /// Samples heard: all of the window, or up to the last complete segment's end when Whisper stopped there.
        var consumed: Int

        /// OpenAI's gate: Whisper thinks it holds no speech (probability over 0.6) and nothing was said with confidence
        /// (mean log-probability under −1). Passed over, whatever it wrote.
        var isSilent: Bool { noSpeech > WhisperDecoder.noSpeechThreshold && averageLogProbability < WhisperDecoder.unsureBelow }
    }

    /// Decodes windows of at most 30 s each, together: each encoded, then all decoded greedily step by step side by
    /// side (each its own rules; one that has ended is carried along until all have). A window whose greedy result
    /// repeats itself or is unsure goes through the fallback alone, and each window's words are aligned alone (on its
    /// own part of the encoder's output, in the decoder's own cache), so that a window gives what it gives alone.
    private func decodeWindows(_ windows: [ArraySlice<Float>], languages: [String?], cuts: [[Int]]) throws -> [Window] {
        let d = networks.model.description
        let t = d.tokens
        let count = windows.count
        let (cross, own) = try encode(windows)
        let cache = count == 1 ? self.cache : try Self.cache(for: d, capacity: capacity, count: count)

        // The start of transcript alone: its logits say whether there is speech and, if asked, the language (and for an
        // English-only model they are the first token's).
        let first = try step(Array(repeating: [t.sot], count: count), at: 0, cross: cross, cache: cache).logits
        let noSpeech = first.map { Self.probability(of: t.no_speech, in: $0) }
        let heardLanguages =
            d.english_only
            ? Array(repeating: "en", count: count)
            : (0..<count).map { languages[$0] ?? Self.detectLanguage(first[$0], languages: d.languages) }
        let sequences = heardLanguages.map { code in
            d.english_only ? [t.sot] : [t.sot, d.languages[code] ?? d.languages["en"] ?? t.sot, t.transcribe]
        }
        let logits = try prompt(sequences, first: first, cross: cross, cache: cache)
        let greedy = try sampleGreedily(from: logits, at: sequences[0].count, cross: cross, cache: cache)

        return try (0..<count).map { index in
            // Greedy first; a result that repeats itself (its text compresses over 2.4 times) or is unsure (mean
            // log-probability under −1) is sampled again at rising temperatures, five candidates each, the likeliest
            // kept (OpenAI's and faster-whisper's fallback) — unless the window likely holds no speech. The sampling is
            // seeded by the window, so the same audio gives the same words. When every temperature fails, the likeliest
            // result that does not repeat itself is kept (faster-whisper's choice), else the likeliest.
            var result = greedy[index]
            var repeats = repeatsItself(result, cuts: cuts[index])
            if !isAcceptable(result, repeats: repeats, noSpeech: noSpeech[index]) {
                // Alone, in the decoder's own cache: the start sequence run again as the batch ran it.
                let initial = count == 1 ? logits[0] : try prompt([sequences[index]], first: nil, cross: own[index], cache: self.cache)[0]
                (result, repeats) = try fallback(
                    after: result, repeats: repeats, from: initial, sequence: sequences[index],
                    noSpeech: noSpeech[index], seed: UInt64(windows[index].count), cross: own[index], cuts: cuts[index])
            }
            // Complete segments only, unless the last one ends the window (OpenAI's `single_timestamp_ending`).
            let (kept, consumed) = Self.completeSegments(result.tokens, timestampBegin: t.timestamp_begin, windowSamples: windows[index].count)
            // A loop is cut only where the decoding was stuck in it (it ran out of tokens, or still repeats itself after
            // the fallback): a person saying "word, word, word, word" is heard saying it.
            let stuck = repeats || !result.ended
            let text = stuck ? Self.withoutLoop(kept.filter { $0 < t.eot }) : kept.filter { $0 < t.eot }
            var window = Window(
                tokens: text, language: heardLanguages[index], noSpeech: noSpeech[index],
                averageLogProbability: result.averageLogProbability, words: [], consumed: consumed)
            guard !text.isEmpty else { return window }
            // The alignment pass: the start sequence, no timestamps, the text, as one step from the cache's start.
            let rows = try step([sequences[index] + [t.no_timestamps] + text], at: 0, cross: own[index], cache: self.cache).alignment[0]
            window.words = Self.timedWords(
                tokens: text, attention: rows, sequence: sequences[index].count,
                frames: min(d.n_audio_ctx, (windows[index].count / WhisperFeatures.hop + 1) / 2),
                tokenizer: networks.tokenizer, language: heardLanguages[index])
            return window
        }
    }

    /// The logits after each window's start sequence, its tokens run as every decoding runs them: the start of
    /// transcript alone (its logits `first`, when already run), then the language and task (multilingual models).
    private func prompt(_ sequences: [[Int]], first: [[Float]]?, cross: [any TensorValue], cache: [Tensor<Float>]) throws -> [[Float]] {
        let start = try first ?? step(sequences.map { [$0[0]] }, at: 0, cross: cross, cache: cache).logits
        guard sequences[0].count > 1 else { return start }
        return try step(sequences.map { Array($0.dropFirst()) }, at: 1, cross: cross, cache: cache).logits
    }

    /// The encoder's keys and values for each window's cross-attention: the windows' side by side (batch × …), and
    /// each window's alone (a view of its part, no copy). Each window is encoded alone, so that what it gives does not
    /// depend on what it is heard with, and copied into its place at once (one window's output held besides the
    /// batch's, not every window's).
    func encode(_ windows: [ArraySlice<Float>]) throws -> (together: [any TensorValue], alone: [[any TensorValue]]) {
        let d = networks.model.description
        func run(_ window: ArraySlice<Float>) throws -> [OutputTensor] {
            let mel = try Tensor(shape: [1, d.n_mels, WhisperFeatures.frames], values: networks.features.logMel(window))
            return try networks.encoder.run([("mel", mel)], outputs: d.crossNames)
        }
        let first = try run(windows[0])
        guard windows.count > 1 else { return (first, [first]) }
        let together = try first.map { try Tensor<Float>(shape: [windows.count] + $0.shape.dropFirst()) }
        for (index, window) in windows.enumerated() {
            let outputs = index == 0 ? first : try run(window)
            for (output, tensor) in zip(outputs, together) {
                let size = output.count
                guard output.shape.dropFirst() == tensor.shape.dropFirst() else {
                    throw VoiceError(
                        .unavailable, provider: "whisper", message: "the encoder gave outputs of shape \(output.shape) and \(tensor.shape)")
                }
                output.withFloats { (tensor.elements.baseAddress! + index * size).update(from: $0.baseAddress!, count: size) }
            }
        }
        let alone = try windows.indices.map { index in try together.map { try $0.item(index) as any TensorValue } }
        return (together, alone)
    }

    /// Whether a decoding's text repeats itself: it compresses over 2.4 times (OpenAI's `compression_ratio_threshold`) —
    /// in a window of several recordings (`cuts`: where each after the first starts, in samples), the text of any one
    /// of them (its segments by their first timestamp), not the window's: different messages may say the same thing.
    private func repeatsItself(_ candidate: Candidate, cuts: [Int] = []) -> Bool {
        let t = networks.model.description.tokens
        var parts = [[Int]](repeating: [], count: cuts.count + 1)
        var part = 0
        var opened = false
        for token in candidate.tokens where token < t.eot || token >= t.timestamp_begin {
            if token >= t.timestamp_begin {
                // A segment's first timestamp says which recording it is in (20 ms a step); its closing one says nothing.
                if !opened {
                    let sample = (token - t.timestamp_begin) * WhisperRecognizer.sampleRate / 50
                    part = cuts.filter { $0 <= sample }.count
                }
                opened.toggle()
            } else {
                parts[part].append(token)
            }
        }
        return parts.contains { !$0.isEmpty && Self.compressionRatio(networks.tokenizer.text(of: $0)) > Self.repeatsAbove }
    }

    /// Whether a decoding is kept without the fallback: it neither repeats itself nor is unsure, or the window likely
    /// holds no speech.
    private func isAcceptable(_ candidate: Candidate, repeats: Bool, noSpeech: Float) -> Bool {
        !(repeats || candidate.averageLogProbability < Self.unsureBelow) || noSpeech > Self.noSpeechThreshold
    }

    /// The temperature fallback for one window decoded alone (its keys and values in the decoder's own cache):
    /// `greedy` failed (`repeats`: its text repeats itself); each temperature above 0 draws five candidates from
    /// `initial` (the logits after `sequence`). The candidate kept, and whether it repeats itself.
    private func fallback(
        after greedy: Candidate, repeats: Bool, from initial: [Float], sequence: [Int], noSpeech: Float,
        seed: UInt64, cross: [any TensorValue], cuts: [Int]
    ) throws -> (Candidate, repeats: Bool) {
        var failed: [(candidate: Candidate, repeats: Bool)] = [(greedy, repeats)]
        for temperature in Self.temperatures.dropFirst() {
            var candidates: [Candidate] = []
            for draw in 0..<Self.candidates {
                var random = SplitMix(seed: seed &* 0x9E37_79B9 &+ UInt64(temperature * 10) &* 31 &+ UInt64(draw))
                candidates.append(try sample(from: initial, sequence: sequence, temperature: temperature, random: &random, cross: cross))
            }
            let best = candidates.max { $0.score < $1.score }!
            let repeats = repeatsItself(best, cuts: cuts)
            if isAcceptable(best, repeats: repeats, noSpeech: noSpeech) { return (best, repeats) }
            failed.append((best, repeats))
        }
        let fallback = failed.filter { !$0.repeats }.isEmpty ? failed : failed.filter { !$0.repeats }
        let kept = fallback.max { $0.candidate.averageLogProbability < $1.candidate.averageLogProbability }!
        return (kept.candidate, kept.repeats)
    }

    /// OpenAI's thresholds: a text that compresses more than this repeats itself (`compression_ratio_threshold`); a mean
    /// log-probability under this is unsure (`logprob_threshold`); a no-speech probability over this says no speech
    /// (`no_speech_threshold`).
    static let repeatsAbove = 2.4, unsureBelow: Float = -1, noSpeechThreshold: Float = 0.6

    /// The temperatures tried in turn (OpenAI's), and the candidates drawn at each above 0.
    static let temperatures: [Float] = [0, 0.2, 0.4, 0.6, 0.8, 1]
    static let candidates = 5

    /// One decoding of a window.
    struct Candidate {
        /// What was sampled (text and timestamps).
        var tokens: [Int]
        /// The log-probabilities of the tokens and of the end, summed.
        var logProbability: Float
        /// Whether the end-of-text token ended it (not the most tokens a window may have).
        var ended = false
        /// OpenAI's `avg_logprob`: the sum over the tokens and one more.
        var averageLogProbability: Float { logProbability / Float(tokens.count + 1) }
        /// How candidates are ranked (OpenAI's `MaximumLikelihoodRanker` without a length penalty).
        var score: Float { logProbability / Float(max(1, tokens.count)) }
    }

    /// Samples the tokens after `sequence` (whose keys and values the decoder's own cache holds), starting from
    /// `initial` (the logits at its end): one drawn from the tempered distribution at each step.
    private func sample(
        from initial: [Float], sequence: [Int], temperature: Float, random: inout SplitMix,
        cross: [any TensorValue]
    ) throws -> Candidate {
        let t = networks.model.description.tokens
        var logits = initial
        var sampled: [Int] = []
        var logProbabilities: Float = 0
        while true {
            Self.applyRules(to: &logits, sampled: sampled, tokens: t, blank: blank)
            let (next, logProbability) = Self.draw(logits, temperature: temperature, random: &random)
            logProbabilities += logProbability
            if next == t.eot || sampled.count >= mostTokens || sequence.count + sampled.count >= capacity {
                return Candidate(tokens: sampled, logProbability: logProbabilities, ended: next == t.eot)
            }
            sampled.append(next)
            logits = try step([[next]], at: sequence.count + sampled.count - 1, cross: cross, cache: cache).logits[0]
        }
    }

    /// The likeliest tokens after each window's start sequence (`length` tokens, whose keys and values `cache` holds),
    /// starting from `initial` (each window's logits at its end), all windows a step at a time: a window that has
    /// ended is given its end-of-text token again until every window has (its outputs unread).
    private func sampleGreedily(from initial: [[Float]], at length: Int, cross: [any TensorValue], cache: [Tensor<Float>]) throws -> [Candidate] {
        let t = networks.model.description.tokens
        var logits = initial
        var candidates = initial.map { _ in Candidate(tokens: [], logProbability: 0) }
        var open = Array(repeating: true, count: initial.count)
        var position = length
        while true {
            var next = Array(repeating: t.eot, count: initial.count)
            for index in initial.indices where open[index] {
                Self.applyRules(to: &logits[index], sampled: candidates[index].tokens, tokens: t, blank: blank)
                let (token, logProbability) = Self.greedy(logits[index])
                candidates[index].logProbability += logProbability
                if token == t.eot || candidates[index].tokens.count >= mostTokens || position >= capacity {
                    open[index] = false
                    candidates[index].ended = token == t.eot
                } else {
                    candidates[index].tokens.append(token)
                    next[index] = token
                }
            }
            guard open.contains(true) else { return candidates }
            logits = try step(next.map { [$0] }, at: position, cross: cross, cache: cache).logits
            position += 1
        }
    }

    /// A cache for `count` windows decoded together: each layer's self-attention keys, then each layer's values.
    private static func cache(for d: WhisperModel.Description, capacity: Int, count: Int) throws -> [Tensor<Float>] {
        try (0..<(2 * d.n_text_layer)).map { _ in try Tensor(shape: [count, capacity, d.n_text_state]) }
    }

    /// Runs each window's `tokens` (as many for every window) at positions `offset…`: their keys and values written
    /// into `cache` there; per window, the logits of its last token and, per alignment head, each token's attention
    /// over the encoder's frames (heads × tokens × frames).
    func step(_ tokens: [[Int]], at offset: Int, cross: [any TensorValue], cache: [Tensor<Float>]) throws
        -> (logits: [[Float]], alignment: [[[Float]]])
    {
        let d = networks.model.description
        let count = tokens.count
        let n = tokens.first?.count ?? 0
        let input = try Tensor(shape: [count, n], values: tokens.joined().map(Int64.init))
        let position = try Tensor(shape: [1], values: [Int64(offset)])
        let feeds: [(name: String, value: any TensorValue)] =
            [("tokens", input), ("offset", position)]
            + zip(d.cacheNames, cache).map { ($0, $1) } + zip(d.crossNames, cross).map { ($0, $1) }
        let out = try networks.decoder.run(feeds, outputs: ["logits", "new_k", "new_v", "alignment"])
        let state = d.n_text_state
        let layers = d.n_text_layer
        let capacity = self.capacity
        for (part, new) in [out[1], out[2]].enumerated() {
            try new.withFloats { source in
                guard source.count == layers * count * n * state else {
                    throw VoiceError(
                        .unavailable, provider: "whisper", message: "the decoder gave \(source.count) cached values for \(count) × \(n) tokens")
                }
                // new_k and new_v: (layers, windows, tokens, state); the cache: (windows, capacity, state) per layer.
                for layer in 0..<layers {
                    for window in 0..<count {
                        (cache[part * layers + layer].elements.baseAddress! + (window * capacity + offset) * state)
                            .update(from: source.baseAddress! + ((layer * count + window) * n) * state, count: n * state)
                    }
                }
            }
        }
        let heads = d.alignment_heads.count
        let vocabulary = d.n_vocab
        let frames = out[3].shape.last ?? 0
        guard out[3].count == count * heads * n * frames, out[0].count == count * vocabulary else {
            throw VoiceError(.unavailable, provider: "whisper", message: "the decoder gave outputs of shapes \(out[0].shape) and \(out[3].shape)")
        }
        let logits = out[0].withFloats { all in (0..<count).map { Array(all[($0 * vocabulary)..<(($0 + 1) * vocabulary)]) } }
        let size = n * frames
        let alignment =
            n > 1
            ? out[3].withFloats { weights in
                (0..<count).map { window in
                    (0..<heads).map { head in Array(weights[((window * heads + head) * size)..<((window * heads + head + 1) * size)]) }
                }
            } : []
        return (logits, alignment)
    }
}

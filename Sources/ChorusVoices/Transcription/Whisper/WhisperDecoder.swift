import ChorusWire
import CZlib
import Foundation

/// One lane's decoding, token by token, as OpenAI's Whisper and faster-whisper decode: greedy, and sampled again at
/// rising temperatures when the greedy result repeats itself or is unsure (their fallback, seeded by the window so the
/// same audio gives the same words); timestamps on (their rules: in pairs, never going back, the first within 1 s, a
/// timestamp whenever timestamps together are likelier than any word). The self-attention cache stays in place: each
/// step's keys and values are written into it at their positions, the decoder reads what it holds, and nothing is
/// copied in and out of the network at each step. The words are then timed by one more pass over the text without
/// timestamps (the alignment heads' attention, as OpenAI's `find_alignment`). Used by one thread at a time (its lane's).
final class WhisperDecoder: @unchecked Sendable {
    private let networks: WhisperNetworks
    /// Each layer's self-attention keys, then each layer's values: the cache, written in place.
    private let cache: [Tensor<Float>]
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
        cache = try (0..<(2 * d.n_text_layer)).map { _ in try Tensor(shape: [1, capacity, d.n_text_state]) }
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
    }

    /// Decodes one piece (mono 16 kHz): a 30 s window from its start, and, as OpenAI's `transcribe` seeks, another
    /// from where the last complete segment ended whenever Whisper stopped before the window's end without saying
    /// that nothing more is said (a single timestamp at the end). A window Whisper thinks holds no speech and in which
    /// nothing was said with confidence (OpenAI's gate: no-speech probability over 0.6, mean log-probability under −1)
    /// is passed over.
    /// - Parameters:
    ///   - language: The language to transcribe it as; `nil` to detect it (multilingual models: from the first
    ///     window, kept for the rest of the piece).
    /// - Throws: `VoiceError` (`.unavailable`) when the runtime fails.
    func decode(_ samples: ArraySlice<Float>, language: String?) throws -> Piece {
        var seek = samples.startIndex
        let length = Double(samples.count) / Double(WhisperRecognizer.sampleRate)
        var piece = Piece(tokens: [], language: language ?? "", noSpeech: 1, averageLogProbability: 0, words: [])
        var language = language
        while samples.endIndex - seek >= WhisperFeatures.hop {
            let window = samples[seek..<min(samples.endIndex, seek + WhisperFeatures.samples)]
            let heard = try decodeWindow(window, language: language)
            language = language ?? heard.language
            if piece.language.isEmpty { piece.language = heard.language }
            if piece.tokens.isEmpty { piece.noSpeech = heard.noSpeech }
            let silent = heard.noSpeech > 0.6 && heard.averageLogProbability < -1
            if !silent && !heard.tokens.isEmpty {
                let offset = Double(seek - samples.startIndex) / Double(WhisperRecognizer.sampleRate)
                piece.averageLogProbability = (piece.averageLogProbability * Float(piece.tokens.count) + heard.averageLogProbability * Float(heard.tokens.count))
                    / Float(piece.tokens.count + heard.tokens.count)
                piece.tokens += heard.tokens
                // Within the audio: the encoder's last frame can reach 20 ms past it.
                piece.words += heard.words.map {
                    WordTiming(word: $0.word, start: min($0.start + offset, length), end: min($0.end + offset, length))
                }
            }
            seek += silent ? window.count : max(WhisperFeatures.hop, min(window.count, heard.consumed))
        }
        return piece
    }

    /// What one window said, and how many of its samples that covers.
    private struct Window {
        var tokens: [Int]
        var language: String
        var noSpeech: Float
        var averageLogProbability: Float
        var words: [WordTiming]
        /// Samples heard: all of the window, or up to the last complete segment's end when Whisper stopped there.
        var consumed: Int
    }

    /// Decodes one window of at most 30 s.
    private func decodeWindow(_ samples: ArraySlice<Float>, language: String?) throws -> Window {
        let d = networks.model.description, t = d.tokens
        let mel = try Tensor(shape: [1, d.n_mels, WhisperFeatures.frames], values: networks.features.logMel(samples))
        let cross = try networks.encoder.run([("mel", mel)], outputs: d.crossNames)
        let audioFrames = min(d.n_audio_ctx, (samples.count / WhisperFeatures.hop + 1) / 2)

        // The start of transcript alone: its logits say whether there is speech and, if asked, the language (and for an
        // English-only model they are the first token's).
        var logits = try step([t.sot], at: 0, cross: cross).logits
        let noSpeech = Self.probability(of: t.no_speech, in: logits)
        var heardLanguage = "en"
        var sequence = [t.sot]
        if !d.english_only {
            let code = language ?? Self.detectLanguage(logits, languages: d.languages)
            heardLanguage = code
            sequence += [d.languages[code] ?? d.languages["en"] ?? t.sot, t.transcribe]
            logits = try step(Array(sequence.dropFirst()), at: 1, cross: cross).logits
        }
        // Greedy first; a result that repeats itself (its text compresses over 2.4 times) or is unsure (mean
        // log-probability under −1) is sampled again at rising temperatures, five candidates each, the likeliest kept
        // (OpenAI's and faster-whisper's fallback) — unless the window likely holds no speech. The sampling is seeded
        // by the window, so the same audio gives the same words.
        // When every temperature fails, the likeliest result that does not repeat itself is kept (faster-whisper's
        // choice), else the likeliest.
        var chosen: Candidate?
        var failed: [(candidate: Candidate, repeats: Bool)] = []
        for temperature in Self.temperatures {
            var candidates: [Candidate] = []
            for draw in 0..<(temperature == 0 ? 1 : Self.candidates) {
                var random = SplitMix(seed: UInt64(samples.count) &* 0x9E37_79B9 &+ UInt64(temperature * 10) &* 31 &+ UInt64(draw))
                candidates.append(try sample(from: logits, sequence: sequence, temperature: temperature, random: &random, cross: cross))
            }
            let best = candidates.max { $0.score < $1.score }!
            let repeats = Self.compressionRatio(networks.tokenizer.text(of: best.tokens.filter { $0 < t.eot })) > 2.4
            if !(repeats || best.averageLogProbability < -1) || noSpeech > 0.6 {
                chosen = best
                break
            }
            failed.append((best, repeats))
        }
        let fallback = failed.filter { !$0.repeats }.isEmpty ? failed : failed.filter { !$0.repeats }
        let result = chosen ?? fallback.max { $0.candidate.averageLogProbability < $1.candidate.averageLogProbability }!.candidate
        let sampled = result.tokens, average = result.averageLogProbability
        // Complete segments only, unless the last one ends the window (OpenAI's `single_timestamp_ending`).
        let (kept, consumed) = Self.completeSegments(sampled, timestampBegin: t.timestamp_begin, windowSamples: samples.count)
        let text = Self.withoutLoop(kept.filter { $0 < t.eot })
        guard !text.isEmpty else {
            return Window(tokens: [], language: heardLanguage, noSpeech: noSpeech, averageLogProbability: average, words: [], consumed: consumed)
        }
        // The alignment pass: the start sequence, no timestamps, the text, as one step from the cache's start.
        let aligned = sequence + [t.no_timestamps] + text
        let rows = try step(aligned, at: 0, cross: cross).alignment
        let words = Self.timedWords(tokens: text, attention: rows, sequence: sequence.count, frames: audioFrames,
                                    tokenizer: networks.tokenizer, language: heardLanguage)
        return Window(tokens: text, language: heardLanguage, noSpeech: noSpeech, averageLogProbability: average, words: words, consumed: consumed)
    }

    /// The temperatures tried in turn (OpenAI's), and the candidates drawn at each above 0.
    static let temperatures: [Float] = [0, 0.2, 0.4, 0.6, 0.8, 1]
    static let candidates = 5

    /// One decoding of a window.
    struct Candidate {
        /// What was sampled (text and timestamps).
        var tokens: [Int]
        /// The log-probabilities of the tokens and of the end, summed.
        var logProbability: Float
        /// OpenAI's `avg_logprob`: the sum over the tokens and one more.
        var averageLogProbability: Float { logProbability / Float(tokens.count + 1) }
        /// How candidates are ranked (OpenAI's `MaximumLikelihoodRanker` without a length penalty).
        var score: Float { logProbability / Float(max(1, tokens.count)) }
    }

    /// Samples the tokens after `sequence` (whose keys and values the cache holds), starting from `initial` (the logits
    /// at its end): the likeliest token at each step at temperature 0, else one drawn from the tempered distribution.
    private func sample(from initial: [Float], sequence: [Int], temperature: Float, random: inout SplitMix,
                        cross: [OutputTensor]) throws -> Candidate {
        let t = networks.model.description.tokens
        var logits = initial
        var sampled: [Int] = []
        var logProbabilities: Float = 0
        while true {
            Self.applyRules(to: &logits, sampled: sampled, tokens: t, blank: blank)
            let (next, logProbability) = temperature == 0 ? Self.greedy(logits) : Self.draw(logits, temperature: temperature, random: &random)
            logProbabilities += logProbability
            if next == t.eot || sampled.count >= mostTokens || sequence.count + sampled.count >= capacity { break }
            sampled.append(next)
            logits = try step([next], at: sequence.count + sampled.count - 1, cross: cross).logits
        }
        return Candidate(tokens: sampled, logProbability: logProbabilities)
    }

    /// A token drawn from softmax(`logits` / `temperature`), and its log-probability without the temperature.
    static func draw(_ logits: [Float], temperature: Float, random: inout SplitMix) -> (Int, Float) {
        let largest = logits.max() ?? 0
        var total: Float = 0, plain: Float = 0
        for value in logits where value > -.infinity {
            total += exp((value - largest) / temperature)
            plain += exp(value - largest)
        }
        var target = Float(random.unit()) * total
        var chosen = logits.firstIndex(of: largest) ?? 0
        for (index, value) in logits.enumerated() where value > -.infinity {
            target -= exp((value - largest) / temperature)
            if target <= 0 {
                chosen = index
                break
            }
        }
        return (chosen, logits[chosen] - largest - log(plain))
    }

    /// How many times `text`'s UTF-8 bytes compress with zlib (OpenAI's `compression_ratio`): over 2.4, Whisper is
    /// repeating itself.
    static func compressionRatio(_ text: String) -> Double {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return 0 }
        var size = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        guard compress2(&output, &size, bytes, uLong(bytes.count), 6) == Z_OK, size > 0 else { return 0 }
        return Double(bytes.count) / Double(size)
    }

    /// A small seeded generator (SplitMix64): the same seed, the same numbers.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64

        init(seed: UInt64) { state = seed }

        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }

        /// A number in [0, 1).
        mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    }

    /// The sampled tokens to keep and the samples they cover, as OpenAI's `transcribe` decides: a sequence ending with
    /// a single timestamp, or without two timestamps in a row, covers the whole window; otherwise the segment after the
    /// last pair is unfinished — dropped, and the window covered up to that pair's time.
    static func completeSegments(_ sampled: [Int], timestampBegin: Int, windowSamples: Int) -> (tokens: [Int], consumed: Int) {
        let isStamp = sampled.map { $0 >= timestampBegin }
        let singleEnding = isStamp.count >= 2 ? (!isStamp[isStamp.count - 2] && isStamp[isStamp.count - 1]) : (isStamp.last ?? false)
        let pairs = (1..<max(1, sampled.count)).filter { isStamp[$0 - 1] && isStamp[$0] }
        guard let lastPair = pairs.last, !singleEnding else { return (sampled, windowSamples) }
        let time = sampled[lastPair] - timestampBegin   // in 20 ms steps
        return (Array(sampled[..<lastPair]), min(windowSamples, time * 2 * WhisperFeatures.hop))
    }

    /// Runs `tokens` at positions `offset…`: their keys and values written into the cache there; the logits of the last
    /// one and, per alignment head, each token's attention over the encoder's frames (heads × tokens × frames).
    private func step(_ tokens: [Int], at offset: Int, cross: [OutputTensor]) throws -> (logits: [Float], alignment: [[Float]]) {
        let d = networks.model.description
        let input = try Tensor(shape: [1, tokens.count], values: tokens.map(Int64.init))
        let position = try Tensor(shape: [1], values: [Int64(offset)])
        let feeds: [(name: String, value: any TensorValue)] = [("tokens", input), ("offset", position)]
            + zip(d.cacheNames, cache).map { ($0, $1) } + zip(d.crossNames, cross).map { ($0, $1) }
        let out = try networks.decoder.run(feeds, outputs: ["logits", "new_k", "new_v", "alignment"])
        let n = tokens.count, state = d.n_text_state, layers = d.n_text_layer
        for (part, new) in [out[1], out[2]].enumerated() {
            let source = new.floats
            guard source.count == layers * n * state else {
                throw VoiceError(.unavailable, provider: "whisper", message: "the decoder gave \(source.count) cached values for \(n) tokens")
            }
            for layer in 0..<layers {
                (cache[part * layers + layer].elements.baseAddress! + offset * state).update(from: source.baseAddress! + layer * n * state, count: n * state)
            }
        }
        let heads = d.alignment_heads.count, weights = out[3].floats
        let frames = out[3].shape.last ?? 0
        guard weights.count == heads * n * frames, out[0].count == d.n_vocab else {
            throw VoiceError(.unavailable, provider: "whisper", message: "the decoder gave outputs of shapes \(out[0].shape) and \(out[3].shape)")
        }
        let alignment = n > 1 ? (0..<heads).map { head in Array(weights[(head * n * frames)..<((head + 1) * n * frames)]) } : []
        return (Array(out[0].floats), alignment)
    }

    /// OpenAI's logit filters for greedy decoding with timestamps: special tokens are never written (languages, tasks,
    /// no-speech, no-timestamps); the first token is neither a space nor the end; timestamps come in pairs (one alone
    /// only just before the end) and never go back, the first within `latestFirstTimestamp`, and a timestamp is taken
    /// whenever timestamps together are likelier than any word. Whisper's annotations of sounds ("(wind blowing)",
    /// "♪") may be written, and are left out of what it heard afterwards (`WhisperRecognizer.withoutAnnotations`):
    /// forbidding their tokens instead (model.json's `suppress`, faster-whisper's `suppress_tokens`) made tiny.en turn
    /// noise into made-up words, which cannot be told from speech afterwards.
    static func applyRules(to logits: inout [Float], sampled: [Int], tokens t: WhisperModel.Description.Tokens, blank: Int? = nil) {
        let count = logits.count, begin = t.timestamp_begin
        guard begin < count else { return }
        for token in t.sot..<begin { logits[token] = -.infinity }
        if sampled.isEmpty {
            logits[t.eot] = -.infinity
            if let blank, blank < count { logits[blank] = -.infinity }   // " ": OpenAI's suppress_blank
        }
        let lastWasTimestamp = sampled.last.map { $0 >= begin } ?? false
        let penultimateWasTimestamp = sampled.count < 2 || sampled[sampled.count - 2] >= begin
        if lastWasTimestamp {
            if penultimateWasTimestamp {
                for token in begin..<count { logits[token] = -.infinity }
            } else {
                for token in 0..<t.eot { logits[token] = -.infinity }
            }
        }
        if let last = sampled.last(where: { $0 >= begin }) {
            let least = lastWasTimestamp && !penultimateWasTimestamp ? last : last + 1
            for token in begin..<min(least, count) { logits[token] = -.infinity }
        }
        if sampled.isEmpty {
            for token in 0..<begin { logits[token] = -.infinity }
            for token in min(count, begin + latestFirstTimestamp + 1)..<count { logits[token] = -.infinity }
        }
        // A timestamp when timestamps together are likelier than the likeliest text token.
        var largest = -Float.infinity
        for value in logits where value > largest { largest = value }
        guard largest > -.infinity else { return }
        var stampSum: Float = 0, textBest = -Float.infinity
        for token in begin..<count where logits[token] > -.infinity { stampSum += exp(logits[token] - largest) }
        for token in 0..<begin where logits[token] > textBest { textBest = logits[token] }
        if stampSum > 0, log(stampSum) + largest > textBest {
            for token in 0..<begin { logits[token] = -.infinity }
        }
    }

    /// The words of `tokens` timed from the alignment rows (`sequence` rows of start-of-transcript tokens, then the
    /// no-timestamps token's, then one per text token; `frames` of each row's attention hold audio).
    static func timedWords(tokens: [Int], attention: [[Float]], sequence: Int, frames: Int, tokenizer: WhisperTokenizer,
                           language: String) -> [WordTiming] {
        let rows = sequence + 1 + tokens.count
        guard !tokens.isEmpty, let first = attention.first, frames > 0, first.count % rows == 0 else { return [] }
        let stride = first.count / rows
        let times = WhisperAlignment.rowTimes(weights: attention, totalRows: rows, firstRow: sequence, stride: stride, frames: frames)
        let words = tokenizer.words(of: tokens, language: language)
        // Row 0 is the no-timestamps token, which predicts the first text token: a word's first token k starts at row k.
        let timed = words.map { word in
            WordTiming(word: word.text, start: times[word.tokens.lowerBound], end: times[min(word.tokens.upperBound, times.count - 1)])
        }
        return WhisperTokenizer.mergingPunctuation(timed)
    }

    /// The probability of `token` among `logits` (softmax).
    static func probability(of token: Int, in logits: [Float]) -> Float {
        guard token < logits.count, let largest = logits.max() else { return 0 }
        var sum: Float = 0
        for value in logits { sum += exp(value - largest) }
        return exp(logits[token] - largest) / sum
    }

    /// The language whose token the start of transcript makes likeliest.
    static func detectLanguage(_ logits: [Float], languages: [String: Int]) -> String {
        languages.filter { $0.value < logits.count }.max { logits[$0.value] < logits[$1.value] || logits[$0.value] == logits[$1.value] && $0.key > $1.key }?.key ?? "en"
    }

    /// The likeliest token and its log-probability.
    static func greedy(_ logits: [Float]) -> (Int, Float) {
        var best = 0, largest = -Float.infinity
        for (index, value) in logits.enumerated() where value > largest {
            largest = value
            best = index
        }
        var sum: Float = 0
        for value in logits where value > -.infinity { sum += exp(value - largest) }
        return (best, -log(sum))
    }

    /// `tokens` without a loop at its end: when the last tokens repeat one run of 1–12 tokens four times or more
    /// (greedy decoding stuck on a phrase), the repeats after the first are dropped.
    static func withoutLoop(_ tokens: [Int]) -> [Int] {
        for length in 1...12 {
            var repeats = 1
            while tokens.count >= (repeats + 1) * length,
                  tokens[(tokens.count - (repeats + 1) * length)..<(tokens.count - repeats * length)] == tokens[(tokens.count - length)...] {
                repeats += 1
            }
            if repeats >= 4 { return Array(tokens.prefix(tokens.count - (repeats - 1) * length)) }
        }
        return tokens
    }
}

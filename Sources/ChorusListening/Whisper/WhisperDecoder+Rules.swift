import CZlib
import ChorusSupport
import ChorusWire
import Foundation

/// Whisper's decoding rules, as OpenAI's Whisper and faster-whisper apply them, each a pure function of what it is
/// given (tested on their own in `WhisperPartsTests`): the logit filters, the choice of a token, the measures of the
/// fallback, where a window's complete segments end, and the words timed from the alignment heads.
extension WhisperDecoder {
    /// A token drawn from softmax(`logits` / `temperature`), and its log-probability without the temperature.
    static func draw(_ logits: [Float], temperature: Float, random: inout SplitMix) -> (Int, Float) {
        let largest = logits.max() ?? 0
        var total: Float = 0
        var plain: Float = 0
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

    /// The seeded generator sampling draws with.
    typealias SplitMix = SplitMix64

    /// The sampled tokens to keep and the samples they cover, as OpenAI's `transcribe` decides: a sequence ending with
    /// a single timestamp, or without two timestamps in a row, covers the whole window; otherwise the segment after the
    /// last pair is unfinished — dropped, and the window covered up to that pair's time.
    static func completeSegments(_ sampled: [Int], timestampBegin: Int, windowSamples: Int) -> (tokens: [Int], consumed: Int) {
        let isStamp = sampled.map { $0 >= timestampBegin }
        let singleEnding = isStamp.count >= 2 ? (!isStamp[isStamp.count - 2] && isStamp[isStamp.count - 1]) : (isStamp.last ?? false)
        let pairs = (1..<max(1, sampled.count)).filter { isStamp[$0 - 1] && isStamp[$0] }
        guard let lastPair = pairs.last, !singleEnding else { return (sampled, windowSamples) }
        let time = sampled[lastPair] - timestampBegin  // in 20 ms steps
        return (Array(sampled[..<lastPair]), min(windowSamples, time * 2 * WhisperFeatures.hop))
    }

    /// OpenAI's logit filters for greedy decoding with timestamps: special tokens are never written (languages, tasks,
    /// no-speech, no-timestamps); the first token is neither a space nor the end; timestamps come in pairs (one alone
    /// only just before the end) and never go back, the first within `latestFirstTimestamp`, and a timestamp is taken
    /// whenever timestamps together are likelier than any word. Whisper's annotations of sounds ("(wind blowing)",
    /// "♪") may be written, and are left out of what it heard afterwards (`WhisperRecognizer.withoutAnnotations`):
    /// forbidding their tokens instead (model.json's `suppress`, faster-whisper's `suppress_tokens`) made tiny.en turn
    /// noise into made-up words, which cannot be told from speech afterwards.
    static func applyRules(to logits: inout [Float], sampled: [Int], tokens t: WhisperModel.Description.Tokens, blank: Int? = nil) {
        let count = logits.count
        let begin = t.timestamp_begin
        guard begin < count else { return }
        for token in t.sot..<begin { logits[token] = -.infinity }
        if sampled.isEmpty {
            logits[t.eot] = -.infinity
            if let blank, blank < count { logits[blank] = -.infinity }  // " ": OpenAI's suppress_blank
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
        var stampSum: Float = 0
        var textBest = -Float.infinity
        for token in begin..<count where logits[token] > -.infinity { stampSum += exp(logits[token] - largest) }
        for token in 0..<begin where logits[token] > textBest { textBest = logits[token] }
        if stampSum > 0, log(stampSum) + largest > textBest {
            for token in 0..<begin { logits[token] = -.infinity }
        }
    }

    /// The words of `tokens` timed from the alignment rows (`sequence` rows of start-of-transcript tokens, then the
    /// no-timestamps token's, then one per text token; `frames` of each row's attention hold audio).
    static func timedWords(
        tokens: [Int], attention: [[Float]], sequence: Int, frames: Int, tokenizer: WhisperTokenizer,
        language: String
    ) -> [WordTiming] {
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
        languages.filter { $0.value < logits.count }.max {
            logits[$0.value] < logits[$1.value] || logits[$0.value] == logits[$1.value] && $0.key > $1.key
        }?.key ?? "en"
    }

    /// The likeliest token and its log-probability.
    static func greedy(_ logits: [Float]) -> (Int, Float) {
        var best = 0
        var largest = -Float.infinity
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
                tokens[(tokens.count - (repeats + 1) * length)..<(tokens.count - repeats * length)] == tokens[(tokens.count - length)...]
            {
                repeats += 1
            }
            if repeats >= 4 { return Array(tokens.prefix(tokens.count - (repeats - 1) * length)) }
        }
        return tokens
    }
}

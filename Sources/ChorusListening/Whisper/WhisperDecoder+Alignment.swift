import ChorusInference
import ChorusSpeech
import ChorusWire
import Foundation

extension WhisperDecoder {
    /// A text known to be spoken in a window, and where: its tokens (`WhisperTokenizer.tokens(of:)`), and the window's
    /// samples that hold it.
    struct KnownText {
        var tokens: [Int]
        var samples: Range<Int>
    }

    /// A window's texts, timed: the language it was heard as, and each text's words (with their leading spaces, as
    /// `WhisperTokenizer.mergingPunctuation` leaves them) in seconds from the window's start.
    struct Alignment {
        var language: String
        var words: [[WordTiming]]
    }

    /// Times texts known to be spoken in each window (at most 30 s each, mono 16 kHz) without decoding them: the window
    /// encoded, then its start sequence, the no-timestamps token and all its texts' tokens run through the decoder as
    /// one step, the alignment heads' attention made comparable over all of them (`WhisperAlignment.matrix`), and each
    /// text's words timed within its own samples (OpenAI's `find_alignment` given the text, as stable-ts aligns). One
    /// decoder pass instead of one per token, nothing misheard, and no word of one message timed in another's audio.
    /// Windows are encoded `batch` at a time.
    /// - Parameters:
    ///   - texts: Each window's texts in order; their tokens together at most what the decoder holds after the start
    ///     sequence (a window whose texts do not fit gets no words).
    ///   - language: The language spoken; `nil` to detect it (multilingual models: each window's from its audio).
    /// - Throws: `VoiceError` (`.unavailable`) when the runtime fails.
    func align(_ windows: [ArraySlice<Float>], texts: [[KnownText]], language: String?) throws -> [Alignment] {
        try VoiceError.inference("whisper") {
            let d = networks.model.description
            let t = d.tokens
            var aligned: [Alignment] = []
            for start in stride(from: 0, to: windows.count, by: Self.batch) {
                let part = start..<min(windows.count, start + Self.batch)
                let (_, own) = try encode(Array(windows[part]))
                for (cross, index) in zip(own, part) {
                    let code: String
                    if d.english_only {
                        code = "en"
                    } else if let language {
                        code = language
                    } else {
                        code = Self.detectLanguage(try step([[t.sot]], at: 0, cross: cross, cache: cache).logits[0], languages: d.languages)
                    }
                    let sequence = d.english_only ? [t.sot] : [t.sot, d.languages[code] ?? d.languages["en"] ?? t.sot, t.transcribe]
                    let known = texts[index]
                    let tokens = known.flatMap(\.tokens)
                    guard !tokens.isEmpty, sequence.count + 1 + tokens.count <= capacity else {
                        aligned.append(Alignment(language: code, words: known.map { _ in [] }))
                        continue
                    }
                    let attention = try step([sequence + [t.no_timestamps] + tokens], at: 0, cross: cross, cache: cache).alignment[0]
                    let frames = min(d.n_audio_ctx, (windows[index].count / WhisperFeatures.hop + 1) / 2)
                    let totalRows = sequence.count + 1 + tokens.count
                    guard let first = attention.first, first.count % totalRows == 0 else {
                        throw VoiceError(
                            .unavailable, provider: "whisper",
                            message: "the decoder gave \(attention.first?.count ?? 0) alignment weights for \(totalRows) tokens")
                    }
                    let matrix = WhisperAlignment.matrix(
                        weights: attention, totalRows: totalRows, firstRow: sequence.count, stride: first.count / totalRows, frames: frames)
                    // Row k predicts token k (row 0 is the no-timestamps token's): a text's rows are its tokens', and one
                    // more, the row that predicts what follows it (the next text's first token, or the end of text),
                    // entered where its last word ends (as `timedWords` ends a word where the next token's row begins).
                    var row = 0
                    var words: [[WordTiming]] = []
                    for text in known {
                        let rows = row..<(row + text.tokens.count + 1)
                        row += text.tokens.count
                        let samplesPerFrame = WhisperFeatures.hop * 2
                        let columns =
                            min(
                                frames, text.samples.lowerBound / samplesPerFrame)..<min(
                                frames, (text.samples.upperBound + samplesPerFrame - 1) / samplesPerFrame)
                        let times = WhisperAlignment.times(matrix, frames: frames, rows: rows, columns: columns)
                        guard times.count == text.tokens.count + 2 else {
                            words.append([])
                            continue
                        }
                        let timed = networks.tokenizer.words(of: text.tokens, language: code).map { word in
                            WordTiming(word: word.text, start: times[word.tokens.lowerBound], end: times[word.tokens.upperBound])
                        }
                        words.append(WhisperTokenizer.mergingPunctuation(timed))
                    }
                    aligned.append(Alignment(language: code, words: words))
                }
            }
            return aligned
        }
    }
}

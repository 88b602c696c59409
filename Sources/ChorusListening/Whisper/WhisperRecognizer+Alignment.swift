import ChorusSpeech
import ChorusWire
import Foundation

extension WhisperRecognizer {
    /// Seconds of audio one alignment window holds, packed (`align(together:language:)`): all of Whisper's 30 s, as no
    /// timestamp need be said at its end.
    public static let alignmentWindowSeconds = Double(WhisperFeatures.samples) / Double(sampleRate)

    /// Seconds of silence between audios aligned in one window: each text is timed within its own audio, so a short gap
    /// keeps them apart; half of what transcription leaves (`packingGap`), which with the whole 30 s window puts five
    /// 5.4 s messages in a window where transcription's 28 s with 1 s gaps holds four.
    public static let alignmentGap = 0.5

    /// Times the words of texts known to be spoken (a render's synthesized messages, whose voice gave no word times)
    /// in their audios (mono, `sampleRate` Hz), without transcribing them (`WhisperDecoder.align`): consecutive short
    /// ones side by side in one window (`alignmentGap` of silence between them, up to `alignmentWindowSeconds` and as
    /// many tokens as a window decodes), each window encoded once and its texts run through the
    /// decoder in one step. Several times faster than transcribing and matching the text to what was heard, and the
    /// words are the text's own.
    ///
    /// Each transcript has the text (whitespace runs made one space) and its words timed in its own audio (Whisper's
    /// times, not sharpened: `Transcript.alignment(of:samples:rate:)` and renders sharpen them); an audio that is silent
    /// gets no words. `nil` for an audio this cannot align — longer than a window, or a text with no word or too many
    /// tokens for one — which is to be transcribed instead.
    /// - Parameters:
    ///   - audios: Each audio (mono, `sampleRate` Hz) and the text known to be said in it.
    ///   - language: The language spoken; `nil` to detect it (multilingual models: then each audio is a window of its
    ///     own, as one window is one language).
    /// - Throws: `VoiceError` (`.badRequest`) for a language the model does not transcribe; `.unavailable` when the
    ///   runtime fails; `CancellationError` when cancelled before its turn.
    public func align(together audios: [(samples: [Float], text: String)], language: String? = nil) async throws -> [Transcript?] {
        let code = try language.map(languageCode(_:))
        let rate = Self.sampleRate
        let gap = Int(Self.alignmentGap * Double(rate))
        let most = Int(Self.alignmentWindowSeconds * Double(rate))
        let tokenizer = networks.tokenizer
        let mostTokens = lanes[0].decoder.mostTokens
        var transcripts = [Transcript?](repeating: nil, count: audios.count)
        // Windows of (audio, its tokens); a window's length in samples and in tokens.
        var windows: [[(index: Int, tokens: [Int])]] = []
        var length = 0
        var tokenCount = 0
        let together = model.isEnglishOnly || code != nil
        for (index, audio) in audios.enumerated() {
            let text = audio.text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            let samples = audio.samples
            if samples.isEmpty || SpeechChunks.isSilent(samples[...], rate: rate) {
                transcripts[index] = Transcript(
                    text: text, language: model.isEnglishOnly ? "en" : code ?? "", duration: Double(samples.count) / Double(rate), words: [])
                continue
            }
            guard samples.count <= most, text.contains(where: { $0.isLetter || $0.isNumber }),
                let tokens = tokenizer.tokens(of: " " + text), tokens.count <= mostTokens
            else { continue }
            if together, !windows.isEmpty, length + gap + samples.count <= most, tokenCount + tokens.count <= mostTokens {
                windows[windows.count - 1].append((index, tokens))
                length += gap + samples.count
                tokenCount += tokens.count
            } else {
                windows.append([(index, tokens)])
                length = samples.count
                tokenCount = tokens.count
            }
        }
        let lanesWork = onLanes(windows) { mine, decoder in try Self.align(mine, audios: audios, gap: gap, on: decoder, language: code) }
        try await withThrowingTaskGroup(of: [(Int, Transcript)].self) { group in
            for work in lanesWork { group.addTask(operation: work) }
            for try await aligned in group {
                for (index, transcript) in aligned { transcripts[index] = transcript }
            }
        }
        return transcripts
    }

    /// Windows of audios with their texts' tokens, each laid out with `gap` samples of silence between its audios and
    /// aligned on `decoder` (a lane's, on its thread): each audio's words (those of its own tokens) in its own time.
    private static func align(
        _ windows: [[(index: Int, tokens: [Int])]], audios: [(samples: [Float], text: String)], gap: Int,
        on decoder: WhisperDecoder, language: String?
    ) throws -> [(Int, Transcript)] {
        let rate = Double(sampleRate)
        let laid = windows.map { window in laidOut(window.map { audios[$0.index].samples }, gap: gap) }
        let starts = laid.map(\.starts)
        let alignments = try decoder.align(
            laid.map { $0.samples[...] },
            texts: zip(windows, starts).map { window, offsets in
                zip(window, offsets).map { WhisperDecoder.KnownText(tokens: $0.tokens, samples: $1..<($1 + audios[$0.index].samples.count)) }
            }, language: language)
        var transcripts: [(Int, Transcript)] = []
        for (window, (offsets, alignment)) in zip(windows, zip(starts, alignments)) {
            for ((member, offset), words) in zip(zip(window, offsets), alignment.words) {
                let shift = Double(offset) / rate
                let duration = Double(audios[member.index].samples.count) / rate
                let timed = words.map { word in
                    let start = min(max(0, word.start - shift), duration)
                    return WordTiming(
                        word: word.word.trimmingCharacters(in: .whitespaces), start: start, end: min(max(start, word.end - shift), duration))
                }
                let text = audios[member.index].text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                transcripts.append((member.index, Transcript(text: text, language: alignment.language, duration: duration, words: timed)))
            }
        }
        return transcripts
    }
}

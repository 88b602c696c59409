import ChorusAudio
import ChorusSpeech
import ChorusSupport
import ChorusWire
public import Foundation

/// Offline transcription with a Whisper model, in process, on ONNX Runtime (`WhisperNetworks`): Chorus computes the
/// log-mel features, runs the encoder once per 30 s window, decodes greedily with its cache in place
/// (`WhisperDecoder`) and times every word from the alignment heads (`WhisperAlignment`).
///
/// Lanes: one per core it was given, each a decoder state and a thread of its own (never Swift's cooperative pool
/// or an event loop: a decode is CPU work of up to seconds); the networks are loaded once and shared by the lanes.
/// Audio is cut at quiet moments into pieces (`SpeechChunks`) that Whisper's 30 s window holds, heard on all lanes at
/// once; word times are from the start of the whole audio.
public final class WhisperRecognizer: Sendable {
    public let model: WhisperModel
    /// The sample rate Whisper hears (audio is resampled to it).
    public static let sampleRate = 16_000

    let networks: WhisperNetworks
    let lanes: [Lane]
    /// The lane the next transcription starts on: calls at once (a render's messages) spread over the lanes.
    let nextLane = Locked(0)

    /// Raised when a change here changes the words a model hears in the same audio (cached transcripts then miss):
    /// 2 — each piece's padding; 3 — Whisper's annotations of sounds left out (`withoutAnnotations`); 4 — Chorus's own
    /// front end, decoder and word alignment on ONNX Runtime (each piece heard in a whole 30 s window); 5 — the
    /// temperature fallback; 6 — audios heard together judged per recording for repeats.
    public static let decodingRevision = 6

    /// The most lanes one recognizer keeps (`ThreadBudget.mostWhisperLanes`).
    public static let mostLanes = ThreadBudget.mostWhisperLanes

    /// The lanes a recognizer keeps unless told: one per core, at most `mostLanes` (`ThreadBudget.whisperLanes`).
    public static var defaultLanes: Int { ThreadBudget().whisperLanes }

    /// A decoder's state and the one thread that uses it.
    struct Lane: Sendable {
        let decoder: WhisperDecoder
        let thread: WorkerPool
    }

    /// Loads `model` once, with a decoding lane per core given.
    /// - Parameters:
    ///   - model: A model checked by `WhisperModel`.
    ///   - threads: The cores to use (at most `mostLanes`): one lane each; the encoder uses them all for one window.
    /// - Throws: `VoiceError` (`.configuration`) naming the file when the runtime refuses the model.
    public init(model: WhisperModel, threads: Int = 1) throws {
        self.model = model
        let count = min(max(1, threads), Self.mostLanes)
        let networks = try WhisperNetworks(model: model)
        self.networks = networks
        lanes = try (0..<count).map { index in
            Lane(decoder: try WhisperDecoder(networks: networks), thread: WorkerPool(threads: 1, name: "whisper-lane-\(index)"))
        }
    }

    /// Transcribes `samples` (mono, `sampleRate` Hz).
    /// - Parameters:
    ///   - samples: The audio.
    ///   - sampleRate: Its rate.
    ///   - language: The language it is in (ISO 639-1, or an English name); `nil` to detect it (multilingual models) —
    ///     each piece's own, the transcript's being the one most of the audio was heard in.
    ///   - sharpen: Move word starts and ends to the pauses around them (`SpeechOnsets`); `false` keeps Whisper's own times.
    /// - Throws: `VoiceError` (`.badRequest`) for no audio or a language the model does not transcribe;
    ///   `CancellationError` when cancelled before its turn.
    public func transcribe(
        _ samples: [Float], sampleRate: Int = WhisperRecognizer.sampleRate, language: String? = nil,
        sharpen: Bool = true
    ) async throws -> Transcript {
        guard sampleRate > 0, !samples.isEmpty else {
            throw VoiceError(.badRequest, provider: "whisper", message: "no audio to transcribe")
        }
        let code = try language.map(languageCode(_:))
        let samples = sampleRate == Self.sampleRate ? samples : try Self.resampled(samples, from: sampleRate)
        let rate = Self.sampleRate
        let lanes = self.lanes
        let ranges = SpeechChunks.ranges(of: samples, rate: rate, lanes: lanes.count)
        let first = nextLane.withLock { lane in
            defer { lane = (lane + 1) % lanes.count }
            return lane
        }
        // Piece i on lane (first + i) % lanes, each lane's pieces in order; all lanes at once.
        let heard = try await withThrowingTaskGroup(of: [(Int, WhisperDecoder.Piece)].self) { group in
            for (number, lane) in lanes.enumerated() {
                let mine = Array(stride(from: (number - first + lanes.count) % lanes.count, to: ranges.count, by: lanes.count))
                guard !mine.isEmpty else { continue }
                group.addTask {
                    try await lane.thread.run {
                        // A piece without sound is not heard: Whisper would make words up. The others are heard together.
                        let sounding = mine.filter { !SpeechChunks.isSilent(samples[ranges[$0]], rate: rate) }
                        let pieces = try lane.decoder.decode(sounding.map { samples[ranges[$0]] }, language: code)
                        return mine.map { index in (index, sounding.firstIndex(of: index).map { pieces[$0] } ?? .empty) }
                    }
                }
            }
            var pieces: [(Int, WhisperDecoder.Piece)] = []
            for try await done in group { pieces += done }
            return pieces.sorted { $0.0 < $1.0 }
        }
        var words: [WordTiming] = []
        var texts: [String] = []
        var spoken: [String: Int] = [:]
        for (index, piece) in heard {
            let offset = Double(ranges[index].lowerBound) / Double(rate)
            let text = Self.withoutAnnotations(networks.tokenizer.text(of: piece.tokens))
            guard !text.isEmpty else { continue }
            texts.append(text)
            spoken[piece.language, default: 0] += ranges[index].count
            words += Self.withoutAnnotations(
                piece.words.map {
                    WordTiming(word: $0.word.trimmingCharacters(in: .whitespaces), start: $0.start + offset, end: $0.end + offset)
                })
        }
        let detected = spoken.max { $0.value < $1.value || $0.value == $1.value && $0.key > $1.key }?.key
        let heardLanguage = Self.language(englishOnly: model.isEnglishOnly, asked: code, detected: detected)
        if sharpen {
            let found = words
            words = try await lanes[first].thread.run { SpeechOnsets.refine(found, samples: samples, rate: rate) }
        }
        return Transcript(text: texts.joined(separator: " "), language: heardLanguage, duration: Double(samples.count) / Double(rate), words: words)
    }

    /// Seconds of silence between audios heard in one window (`transcribe(together:language:sharpen:)`).
    static let packingGap = 1.0

    /// Transcribes several audios (mono, `sampleRate` Hz; a render's recorded messages), each as `transcribe(_:)`
    /// would, but short ones heard side by side in one window: consecutive audios, a second of silence between them,
    /// up to 28 s. Whisper's encoder costs as much for 3 s as for 30 s, so 50 voice notes of 4 s are 7 windows, not 50.
    /// Each transcript holds the words heard within its own audio (by each word's middle), timed from its own start.
    /// Windows are heard on all lanes at once. Audio longer than a window is heard alone, as `transcribe(_:)` hears it;
    /// so is every audio of a multilingual model when the language is to be detected (one window is one language), and
    /// one that got no words beside others.
    /// - Throws: as `transcribe(_:sampleRate:language:sharpen:)`.
    public func transcribe(together audios: [[Float]], language: String? = nil, sharpen: Bool = true) async throws -> [Transcript] {
        let code = try language.map(languageCode(_:))
        let rate = Self.sampleRate
        let gap = Int(Self.packingGap * Double(rate))
        let most = Int(SpeechChunks.longest * Double(rate))
        var transcripts = [Transcript?](repeating: nil, count: audios.count)
        var windows: [[Int]] = []
        var alone: [Int] = []
        var length = 0
        for (index, samples) in audios.enumerated() {
            if samples.isEmpty || SpeechChunks.isSilent(samples[...], rate: rate) {
                transcripts[index] = Transcript(
                    text: "", language: Self.language(englishOnly: model.isEnglishOnly, asked: code, detected: nil),
                    duration: Double(samples.count) / Double(rate), words: [])
            } else if samples.count > most || (!model.isEnglishOnly && code == nil) {
                alone.append(index)
            } else if !windows.isEmpty, length + gap + samples.count <= most {
                windows[windows.count - 1].append(index)
                length += gap + samples.count
            } else {
                windows.append([index])
                length = samples.count
            }
        }
        let englishOnly = model.isEnglishOnly
        let lanesWork = onLanes(windows) { mine, decoder in
            let heard = try Self.hear(
                mine.map { $0.map { audios[$0] } }, gap: gap, on: decoder, language: code, englishOnly: englishOnly, sharpen: sharpen)
            return zip(mine, heard).flatMap { window, transcripts in zip(window, transcripts).map { ($0, $1) } }
        }
        try await withThrowingTaskGroup(of: [(Int, Transcript)].self) { group in
            for work in lanesWork { group.addTask(operation: work) }
            for index in alone {
                group.addTask { [(index, try await self.transcribe(audios[index], language: language, sharpen: sharpen))] }
            }
            for try await heard in group {
                for (index, transcript) in heard { transcripts[index] = transcript }
            }
        }
        // An audio that got no words beside others is heard alone: after one audio's end and the silence, Whisper can
        // take the window to be over (measured: an 11 s speech after a 3 s command came back empty).
        let missed = windows.filter { $0.count > 1 }.joined().filter { transcripts[$0]?.words.isEmpty ?? true }
        try await withThrowingTaskGroup(of: (Int, Transcript).self) { group in
            for index in missed {
                group.addTask { (index, try await self.transcribe(audios[index], language: language, sharpen: sharpen)) }
            }
            for try await (index, transcript) in group { transcripts[index] = transcript }
        }
        return transcripts.map { $0! }
    }

    /// Windows of `audios`, each heard as one piece with `gap` samples of silence between its audios, together on
    /// `decoder` (a lane's, on its thread): each audio its words (those whose middle falls within its stretch, the
    /// silence around it shared half and half with its neighbours) in its own time, and their text.
    private static func hear(
        _ windows: [[[Float]]], gap: Int, on decoder: WhisperDecoder, language: String?, englishOnly: Bool,
        sharpen: Bool
    ) throws -> [[Transcript]] {
        let rate = Double(sampleRate)
        let laid = windows.map { laidOut($0, gap: gap) }
        let starts = laid.map(\.starts)
        let pieces = try decoder.decode(laid.map { $0.samples[...] }, language: language, recordings: starts)
        return zip(windows, zip(starts, pieces)).map { audios, heard in
            let (starts, piece) = heard
            var words = [[WordTiming]](repeating: [], count: audios.count)
            for word in withoutAnnotations(piece.words) {
                let middle = (word.start + word.end) / 2 * rate
                var slot = 0
                while slot + 1 < audios.count, Double(starts[slot + 1]) - Double(gap) / 2 <= middle { slot += 1 }
                let offset = Double(starts[slot]) / rate
                let duration = Double(audios[slot].count) / rate
                let start = min(max(0, word.start - offset), duration)
                words[slot].append(WordTiming(word: word.word, start: start, end: min(max(start, word.end - offset), duration)))
            }
            let heardLanguage = Self.language(englishOnly: englishOnly, asked: language, detected: piece.language)
            return zip(audios, words).map { samples, raw in
                // Whisper's words keep their leading spaces: joined, they are the text as the tokens spell it.
                let text = withoutAnnotations(raw.map(\.word).joined())
                var timed = raw.map { WordTiming(word: $0.word.trimmingCharacters(in: .whitespaces), start: $0.start, end: $0.end) }
                if sharpen { timed = SpeechOnsets.refine(timed, samples: samples, rate: sampleRate) }
                return Transcript(text: text, language: heardLanguage, duration: Double(samples.count) / rate, words: timed)
            }
        }
    }

    /// Work for `windows` (in order) on every lane at once, as tasks to run: window i on lane (first + i) % lanes, the
    /// first lane taking over from where the last call's windows ended (so that calls at once spread over the lanes),
    /// each lane's windows given to `work` together on its thread with its decoder.
    func onLanes<Window: Sendable, Result: Sendable>(
        _ windows: [Window], _ work: @escaping @Sendable (_ mine: [Window], _ decoder: WhisperDecoder) throws -> [Result]
    ) -> [@Sendable () async throws -> [Result]] {
        let lanes = self.lanes
        let first = nextLane.withLock { lane in
            defer { lane = (lane + windows.count) % lanes.count }
            return lane
        }
        return lanes.enumerated().compactMap { number, lane in
            let mine = stride(from: (number - first + lanes.count) % lanes.count, to: windows.count, by: lanes.count).map { windows[$0] }
            guard !mine.isEmpty else { return nil }
            return { try await lane.thread.run { try work(mine, lane.decoder) } }
        }
    }

    /// `audios` laid end to end as one window is heard, `gap` samples of silence between them, and where each starts.
    static func laidOut(_ audios: [[Float]], gap: Int) -> (samples: [Float], starts: [Int]) {
        var samples: [Float] = []
        var starts: [Int] = []
        for audio in audios {
            if !samples.isEmpty { samples += repeatElement(0, count: gap) }
            starts.append(samples.count)
            samples += audio
        }
        return (samples, starts)
    }

    /// The language a transcript is said to be in: English for an English-only model, else the one asked, else the one
    /// detected (none when nothing was heard to detect it from).
    private static func language(englishOnly: Bool, asked: String?, detected: String?) -> String {
        englishOnly ? "en" : asked ?? detected ?? ""
    }

    /// The model's code for `language` (a code or an English name).
    /// - Throws: `VoiceError` (`.badRequest`) naming the language when the model does not transcribe it.
    public func languageCode(_ language: String) throws -> String {
        let code = LanguageNames.code(of: language.trimmingCharacters(in: .whitespaces))
        guard model.languages.contains(code) else {
            throw VoiceError(
                .badRequest, provider: "whisper",
                message: model.isEnglishOnly
                    ? "\(model.name) is English-only; it does not transcribe \(language)"
                    : "\(model.name) does not transcribe \"\(language)\" (it knows \(model.languages.count) languages by ISO 639-1 code or English name)"
            )
        }
        return code
    }

    /// Decodes the audio file at `url` (any format Chorus reads), and transcribes it.
    /// - Throws: `AudioError` naming the file when it cannot be decoded; as `transcribe(_:sampleRate:)` otherwise.
    public func transcribe(fileAt url: URL, language: String? = nil) async throws -> Transcript {
        let samples = try await lanes[0].thread.run { try Self.audio(fileAt: url) }
        return try await transcribe(samples, language: language)
    }

    /// The audio file at `url` as Whisper hears it: mono at `sampleRate` (what `transcribe(_:sampleRate:)` takes).
    /// - Throws: `AudioError` naming the file.
    public static func audio(fileAt url: URL) throws -> [Float] {
        try AudioFileReader(url: url, outputFormat: AudioFormat(sampleRate: sampleRate, channels: 1)).readAll().samples
    }

    /// Samples at `rate` as Whisper hears them (16 kHz), by the engine's resampler.
    private static func resampled(_ samples: [Float], from rate: Int) throws -> [Float] {
        let resampler = try Resampler(from: AudioFormat(sampleRate: rate, channels: 1), to: AudioFormat(sampleRate: sampleRate, channels: 1))
        var output: [Float] = []
        try samples.withUnsafeBufferPointer { try resampler.convert($0, into: &output) }
        try resampler.flush(into: &output)
        return output
    }

    /// Audio bytes as Whisper hears them, read to the end or to one sample past `limit` seconds (whichever comes first:
    /// a small file that decodes to hours is never held whole). A result longer than `limit` means the audio is.
    /// - Parameters:
    ///   - data: The encoded audio (any format Chorus reads).
    ///   - name: What errors call the audio (a form field, a file name).
    ///   - limit: Seconds read at most (and one sample more).
    /// - Throws: `AudioError` naming it.
    public static func audio(data: Data, name: String, limit: Double) throws -> [Float] {
        let reader = try AudioFileReader(data: data, name: name, outputFormat: AudioFormat(sampleRate: sampleRate, channels: 1))
        let most = Int(min(limit, 24 * 3600) * Double(sampleRate)) + 1
        var samples: [Float] = []
        while samples.count < most, let chunk = try reader.read() {
            samples += chunk.prefix(most - samples.count)
        }
        return samples
    }

    /// `text` without what Whisper writes for sounds that are not speech — `(wind blowing)`, `[BLANK_AUDIO]`,
    /// `[ Sound Effects ]`, `♪` — so noise or music alone is no text at all, and a laugh inside speech is not a word
    /// (as ElevenLabs' audio events are left out). Measured with tiny.en: noise, a tone and a chord came back as such
    /// annotations; with the annotation tokens forbidden instead (faster-whisper's `suppress_tokens`), the same sounds
    /// came back as made-up words ("I'm so sorry", "You"), which cannot be told from speech afterwards.
    static func withoutAnnotations(_ text: String) -> String {
        var outside = Annotations()
        return String(text.filter { outside.keeps($0) }).split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The words outside annotations (`withoutAnnotations(_:)`); a word that is only punctuation once they are gone
    /// goes too.
    static func withoutAnnotations(_ words: [WordTiming]) -> [WordTiming] {
        var outside = Annotations()
        return words.compactMap { word in
            let kept = String(word.word.filter { outside.keeps($0) })
            guard kept.contains(where: { $0.isLetter || $0.isNumber }) else { return nil }
            return kept == word.word ? word : WordTiming(word: kept, start: word.start, end: word.end)
        }
    }

    /// Reads text character by character and says which are outside an annotation: brackets and what is between
    /// them, and music notes, are not.
    private struct Annotations {
        private var depth = 0

        mutating func keeps(_ character: Character) -> Bool {
            switch character {
            case "(", "[": depth += 1
            case ")", "]": depth = max(0, depth - 1)
            case "♪", "♫", "♬": return false
            default: return depth == 0
            }
            return false
        }
    }
}

import ChorusAudio
import ChorusWire
import CSherpaOnnx
public import Foundation

/// Offline transcription with a Whisper model through sherpa-onnx's C API, in process. The one owner of its C
/// recognizers: one per core it was given (a lane: the recognizer and a thread of its own, never Swift's cooperative
/// pool or an event loop: a decode is CPU work of up to seconds), made when this is and destroyed with it.
///
/// The model is checked (`WhisperModel`) before sherpa-onnx sees it. Audio is cut at quiet moments into pieces
/// (`SpeechChunks`): as many as Whisper's 30 s window needs, and one per lane once the audio is long enough, heard
/// on all lanes at once; word times are from the start of the whole audio.
public final class WhisperRecognizer: Sendable {
    public let model: WhisperModel
    /// The sample rate Whisper hears (audio is resampled to it).
    public static let sampleRate = 16_000

    private let lanes: [Lane]

    /// Raised when a change here changes the words a model hears in the same audio (cached transcripts then miss):
    /// 2 — each piece's padding (`Recognizer.padding(frames:)`); 3 — Whisper's annotations of sounds left out
    /// (`withoutAnnotations`).
    public static let decodingRevision = 3

    /// The most lanes one recognizer keeps (each is a copy of the model in memory).
    public static let mostLanes = 4

    /// The lanes a recognizer keeps unless told: one per core, at most `mostLanes`.
    public static var defaultLanes: Int { min(ProcessInfo.processInfo.activeProcessorCount, mostLanes) }

    /// A recognizer and the one thread that uses it.
    private struct Lane: Sendable {
        let recognizer: Recognizer
        let thread: WorkerPool
    }

    /// Loads `model` once per lane (about a second and 300 MB resident each for tiny.en in float32).
    /// - Parameters:
    ///   - model: A model checked by `WhisperModel`.
    ///   - threads: The cores to use (at most `mostLanes`): one lane each (a recognizer with one ONNX Runtime thread), which hear the
    ///     pieces of one audio at once — on two cores a 30 s note is heard ~20 % sooner than by one recognizer with
    ///     two threads (its decoder, token by token, keeps a second thread busy only a part of the time).
    /// - Throws: `VoiceError` (`.configuration`) when sherpa-onnx refuses the model.
    public init(model: WhisperModel, threads: Int = 1) throws {
        self.model = model
        lanes = try (0..<min(max(1, threads), Self.mostLanes)).map { index in
            Lane(recognizer: try Recognizer(model: model, threads: 1), thread: WorkerPool(threads: 1, name: "whisper-\(index)"))
        }
    }

    /// Transcribes `samples` (mono, `sampleRate` Hz).
    /// - Parameters:
    ///   - samples: The audio.
    ///   - sampleRate: Its rate.
    ///   - sharpen: Move word starts and ends to the pauses around them (`SpeechOnsets`); `false` keeps Whisper's own times.
    /// - Throws: `VoiceError` (`.badRequest`) for no audio; `CancellationError` when cancelled before its turn.
    public func transcribe(_ samples: [Float], sampleRate: Int = WhisperRecognizer.sampleRate, sharpen: Bool = true) async throws -> Transcript {
        try await Self.transcribe(samples, rate: sampleRate, lanes: lanes, englishOnly: model.isEnglishOnly, sharpen: sharpen)
    }

    /// Decodes the audio file at `url` (any format Chorus reads), and transcribes it.
    /// - Throws: `AudioError` naming the file when it cannot be decoded; as `transcribe(_:sampleRate:)` otherwise.
    public func transcribe(fileAt url: URL) async throws -> Transcript {
        let samples = try await lanes[0].thread.run { try Self.audio(fileAt: url) }
        return try await transcribe(samples)
    }

    /// The audio file at `url` as Whisper hears it: mono at `sampleRate` (what `transcribe(_:sampleRate:)` takes).
    /// - Throws: `AudioError` naming the file.
    public static func audio(fileAt url: URL) throws -> [Float] {
        try AudioFileReader(url: url, outputFormat: AudioFormat(sampleRate: sampleRate, channels: 1)).readAll().samples
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

    private static func transcribe(_ samples: [Float], rate: Int, lanes: [Lane], englishOnly: Bool, sharpen: Bool) async throws -> Transcript {
        guard rate > 0, !samples.isEmpty else {
            throw VoiceError(.badRequest, provider: "whisper", message: "no audio to transcribe")
        }
        let ranges = SpeechChunks.ranges(of: samples, rate: rate, pieces: lanes.count)
        // Piece i on lane i % lanes, each lane's pieces in order; all lanes at once.
        let heard = try await withThrowingTaskGroup(of: [(Int, Recognizer.Piece)].self) { group in
            for (number, lane) in lanes.enumerated() {
                let mine = Array(stride(from: number, to: ranges.count, by: lanes.count))
                guard !mine.isEmpty else { continue }
                group.addTask {
                    try await lane.thread.run {
                        try mine.map { index in
                            // A piece without sound is not heard: Whisper would make words up.
                            if SpeechChunks.isSilent(samples[ranges[index]], rate: rate) { return (index, Recognizer.Piece(text: "", language: "", words: [])) }
                            return (index, try lane.recognizer.decode(Array(samples[ranges[index]]), rate: rate))
                        }
                    }
                }
            }
            var pieces: [(Int, Recognizer.Piece)] = []
            for try await done in group { pieces += done }
            return pieces.sorted { $0.0 < $1.0 }
        }
        var words: [WordTiming] = []
        var texts: [String] = []
        var language = englishOnly ? "en" : ""
        for (index, piece) in heard {
            let offset = Double(ranges[index].lowerBound) / Double(rate)
            if !piece.text.isEmpty { texts.append(piece.text) }
            if language.isEmpty { language = piece.language }
            words += piece.words.map { WordTiming(word: $0.word, start: $0.start + offset, end: $0.end + offset) }
        }
        if sharpen {
            let found = words
            words = try await lanes[0].thread.run { SpeechOnsets.refine(found, samples: samples, rate: rate) }
        }
        return Transcript(text: texts.joined(separator: " "), language: language, duration: Double(samples.count) / Double(rate), words: words)
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

    /// sherpa-onnx's recognizer, used from one thread at a time (the pool's one thread).
    private final class Recognizer: @unchecked Sendable {
        private let handle: OpaquePointer
        /// What the recognizer was made with (its strings live as long as it): each piece's padding is set in it.
        private var config = SherpaOnnxOfflineRecognizerConfig()
        private let strings = CStrings()
        private var padding: Int32 = -1

        /// Frames of padding (10 ms each, silence) after a piece of `frames` frames: at least 300, and at least enough
        /// for 20 s in all. sherpa-onnx pads with zeros after normalizing (not with what Whisper saw after short audio
        /// in training), and pads 1,000 frames unless told. Measured with tiny.en (int8, greedy) on the benchmark's
        /// clear speech (Flite, espeak-ng and alsa-utils' human voice; 228 words): on ~14 s pieces (what two lanes hear
        /// of a 30 s note) 300 frames gave 12.7 % words wrong, 1,000 frames 13.2 % and a full 30 s window 24.1 %, and
        /// the encoder has 30 % fewer frames to hear; on the clips alone (1–6 s), 300 frames repeated words
        /// ("front, left, left": 17.1 %), 1,000 gave 15.4 %, 20 s in all 14.0 % (faster-whisper on the same weights,
        /// int8, greedy: 13.2 % and 12.7 %).

        static func padding(frames: Int) -> Int32 {
            Int32(max(300, 2_000 - frames))
        }

        init(model: WhisperModel, threads: Int) throws {
            var config = SherpaOnnxOfflineRecognizerConfig()
            config.feat_config.sample_rate = Int32(WhisperRecognizer.sampleRate)
            config.feat_config.feature_dim = Int32(model.melBands)
            config.model_config.num_threads = Int32(threads)
            config.model_config.debug = 0
            config.model_config.whisper.enable_token_timestamps = model.timesTokens ? 1 : 0
            config.model_config.whisper.encoder = strings[model.encoder.path]
            config.model_config.whisper.decoder = strings[model.decoder.path]
            config.model_config.whisper.language = strings[model.isEnglishOnly ? "en" : ""]
            config.model_config.whisper.task = strings["transcribe"]
            config.model_config.tokens = strings[model.tokens.path]
            config.model_config.provider = strings["cpu"]
            config.decoding_method = strings["greedy_search"]
            for empty in [\.model_config.model_type, \.model_config.modeling_unit, \.model_config.bpe_vocab, \.hotwords_file, \.rule_fsts,
                          \.rule_fars] as [WritableKeyPath<SherpaOnnxOfflineRecognizerConfig, UnsafePointer<CChar>?>] {
                config[keyPath: empty] = strings[""]
            }
            let made = SherpaOnnxCreateOfflineRecognizer(&config)
            guard let made else {
                throw VoiceError.model("\(model.folder.path): sherpa-onnx could not load this model")
            }
            handle = made
            self.config = config
        }

        deinit { SherpaOnnxDestroyOfflineRecognizer(handle) }

        struct Piece {
            var text: String
            /// What the model said the language is (multilingual models; `<|en|>` comes back as `en`).
            var language: String
            var words: [WordTiming]
        }

        /// One piece of at most 30 s.
        func decode(_ samples: [Float], rate: Int) throws -> Piece {
            guard let stream = SherpaOnnxCreateOfflineStream(handle) else {
                throw VoiceError(.unavailable, provider: "whisper", message: "sherpa-onnx could not start a transcription")
            }
            defer { SherpaOnnxDestroyOfflineStream(stream) }
            let padding = Self.padding(frames: samples.count * 100 / max(1, rate))
            if padding != self.padding {
                config.model_config.whisper.tail_paddings = padding
                SherpaOnnxOfflineRecognizerSetConfig(handle, &config)
                self.padding = padding
            }
            samples.withUnsafeBufferPointer { SherpaOnnxAcceptWaveformOffline(stream, Int32(rate), $0.baseAddress, Int32($0.count)) }
            SherpaOnnxDecodeOfflineStream(handle, stream)
            guard let result = SherpaOnnxGetOfflineStreamResult(stream) else {
                throw VoiceError(.unavailable, provider: "whisper", message: "sherpa-onnx gave no result")
            }
            defer { SherpaOnnxDestroyOfflineRecognizerResult(result) }
            let text = result.pointee.text.map { String(cString: $0) } ?? ""
            let language = (result.pointee.lang.map { String(cString: $0) } ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "<|>"))
            return Piece(text: WhisperRecognizer.withoutAnnotations(text), language: language,
                         words: WhisperRecognizer.withoutAnnotations(Self.words(of: result.pointee)))
        }

        /// Tokens joined into words: a token starting with a space starts a word; its time is its first token's
        /// start to its last token's end. A token's text may be part of a UTF-8 character: bytes are joined first.
        private static func words(of result: SherpaOnnxOfflineRecognizerResult) -> [WordTiming] {
            guard let tokens = result.tokens_arr, let starts = result.timestamps, result.count > 0 else { return [] }
            var words: [WordTiming] = []
            var bytes: [UInt8] = []
            var start = 0.0, end = 0.0
            func flush() {
                let word = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                if !word.isEmpty { words.append(WordTiming(word: word, start: start, end: max(start, end))) }
                bytes.removeAll()
            }
            for index in 0..<Int(result.count) {
                guard let token = tokens[index] else { continue }
                let piece = Array(UnsafeBufferPointer(start: UnsafeRawPointer(token).assumingMemoryBound(to: UInt8.self), count: strlen(token)))
                let tokenStart = Double(starts[index])
                let tokenEnd = tokenStart + (result.durations.map { Double($0[index]) } ?? 0)
                if piece.first == UInt8(ascii: " ") || bytes.isEmpty {
                    flush()
                    start = tokenStart
                }
                bytes += piece
                end = tokenEnd
            }
            flush()
            return words
        }
    }
}

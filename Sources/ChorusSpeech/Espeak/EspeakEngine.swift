import CEspeakNG
import ChorusAudio
import ChorusSupport
import ChorusText
import Foundation

/// The process's one espeak-ng instance. espeak-ng keeps global state (voice, parameters, the callback), so every
/// use runs on one dedicated thread (never Swift's cooperative pool: a synthesis is CPU work of up to a second, and
/// a cooperative thread it held would stall every task of the process meanwhile — the service's requests among
/// them); the callback is registered once, there.
final class EspeakEngine: Sendable {
    static let shared = EspeakEngine()

    private let thread = WorkerPool(threads: 1, name: "espeak")
    private let library = Library()

    /// Installed espeak-ng voices as (identifier, name, languages).
    func installedVoices() async throws -> [(identifier: String, name: String, language: String, gender: Int)] {
        let library = self.library
        return try await thread.run { try library.installedVoices() }
    }

    /// The identifier of the voice espeak-ng is using (for tests: did the variant apply?).
    func currentVoiceIdentifier(for name: String) async throws -> String {
        let library = self.library
        return try await thread.run { try library.currentVoiceIdentifier(for: name) }
    }

    /// Speaks `text` with `voice`.
    func speak(_ text: String, voice: EspeakVoice) async throws -> Output {
        let library = self.library
        return try await thread.run { try library.speak(text, voice: voice) }
    }

    /// `text` as Piper voices read it: IPA phonemes from `voice` (an espeak-ng voice name), one string per sentence,
    /// each clause's punctuation kept and a space after clauses that do not end a sentence (as piper-phonemize
    /// writes them), in canonical decomposition (`ç` is `c` and a cedilla, as Piper's phoneme tables have it).
    /// Clauses without phonemes are left out; no sentence is empty.
    func phonemes(_ text: String, voice: String) async throws -> [String] {
        Self.sentences(of: try await phonemeClauses(text, voice: voice))
    }

    /// A clause of text as Piper voices read it.
    struct PhonemeClause: Sendable, Equatable {
        /// The clause's text (`clauses(of:)`).
        var text: String
        /// The punctuation that ends it, if any.
        var mark: Character?
        /// Its IPA phonemes, words separated by spaces (no mark), in canonical decomposition.
        var phonemes: String
        /// When its text's words (`WordAligner.words`) are not as many as its phoneme words: each text word's
        /// phonemes read alone (a number is several words, espeak-ng joins some short words to the next).
        var wordPhonemes: [String]?
    }

    /// `text`'s clauses (`clauses(of:)`) with the phonemes `voice` (an espeak-ng voice name) gives them; a
    /// pronunciation written in (`[[IPA]]`) is the phonemes `ipa` makes of it, not espeak-ng's.
    func phonemeClauses(_ text: String, voice: String, ipa: @escaping @Sendable (String) -> String = { $0 }) async throws -> [PhonemeClause] {
        let library = self.library
        return try await thread.run { try library.phonemeClauses(text, voice: voice, ipa: ipa) }
    }

    /// Clauses joined into sentences as piper-phonemize writes them: each clause's mark kept, a space after clauses
    /// that do not end a sentence; clauses without phonemes left out; no sentence empty.
    static func sentences(of clauses: [PhonemeClause]) -> [String] {
        var sentences: [String] = []
        var sentence = ""
        for clause in clauses {
            if !clause.phonemes.isEmpty {
                sentence += clause.phonemes
                if let mark = clause.mark { sentence.append(mark) }
            }
            if let mark = clause.mark, Punctuation.sentenceEnds.contains(mark) {
                let finished = sentence.trimmingCharacters(in: .whitespaces)
                if !finished.isEmpty { sentences.append(finished) }
                sentence = ""
            } else if !clause.phonemes.isEmpty {
                sentence += " "
            }
        }
        let last = sentence.trimmingCharacters(in: .whitespaces)
        if !last.isEmpty { sentences.append(last) }
        return sentences
    }

    /// `text` cut into clauses at punctuation followed by a space or the end (`3.5` and `e.g.` inside a word stay), each
    /// with the mark that ends it (`…` is a `.`; a run of marks is its first), and at line breaks (no mark). libespeak-ng
    /// 1.51 reads all it is given as one clause and does not say how a clause ended.
    static func clauses(of text: String) -> [(text: String, mark: Character?)] {
        let characters = Array(text)
        let marks = Punctuation.clauseEnds
        let closers = Punctuation.closers
        var clauses: [(text: String, mark: Character?)] = []
        var current = ""
        func finish(_ mark: Character?) {
            let clause = current.trimmingCharacters(in: .whitespaces)
            if !clause.isEmpty || mark != nil { clauses.append((clause, mark)) }
            current = ""
        }
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character.isNewline {
                finish(nil)
                index += 1
                continue
            }
            if marks.contains(character) {
                // The run of marks and closing quotes or brackets that follows.
                var end = index + 1
                while end < characters.count, marks.contains(characters[end]) || closers.contains(characters[end]) { end += 1 }
                if end == characters.count || characters[end].isWhitespace {
                    current += String(characters[(index + 1)..<end].filter { closers.contains($0) })
                    finish(character == "…" ? "." : character)
                    index = end
                    continue
                }
            }
            current.append(character)
            index += 1
        }
        finish(nil)
        return clauses.filter { !$0.text.isEmpty || $0.mark != nil }
    }

    /// espeak-ng marks a switch of language inside a clause as `(fr)` … `(en)`: not phonemes.
    static func withoutLanguageFlags(_ phonemes: String) -> String {
        guard phonemes.contains("(") else { return phonemes }
        var result = ""
        var inside = false
        for character in phonemes {
            if character == "(" { inside = true } else if character == ")" { inside = false } else if !inside { result.append(character) }
        }
        return result
    }

    /// What one synthesis produced: 16-bit samples at `rate`, word events and clause ends (ms).
    struct Output: Sendable {
        var rate: Int
        var samples: [Int16]
        var words: [Word]
        var clauseEnds: [Int]
    }

    struct Word: Sendable {
        var position: Int
        var length: Int
        var milliseconds: Int
    }
}

/// espeak-ng itself: its state (started or not, at which rate) is only touched on the engine's one thread.
private final class Library: @unchecked Sendable {
    private var sampleRate: Int?

    /// What one synthesis collects from the callback.
    final class Collector {
        var samples: [Int16] = []
        var words: [(position: Int, length: Int, milliseconds: Int)] = []
        var clauseEnds: [Int] = []
    }

    private func start() throws -> Int {
        if let sampleRate { return sampleRate }
        let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nil, 0)
        guard rate > 0 else {
            throw VoiceError(
                .configuration, provider: "espeak",
                message: "espeak-ng could not start (is espeak-ng-data installed? run scripts/setup.sh)")
        }
        espeak_SetSynthCallback { wave, count, events in
            guard let events else { return 0 }
            guard let context = events.pointee.user_data else { return 0 }
            let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
            if let wave, count > 0 { collector.samples.append(contentsOf: UnsafeBufferPointer(start: wave, count: Int(count))) }
            var event = events
            while event.pointee.type != espeakEVENT_LIST_TERMINATED {
                switch event.pointee.type {
                case espeakEVENT_WORD:
                    collector.words.append((Int(event.pointee.text_position), Int(event.pointee.length), Int(event.pointee.audio_position)))
                case espeakEVENT_END, espeakEVENT_MSG_TERMINATED:
                    collector.clauseEnds.append(Int(event.pointee.audio_position))
                default: break
                }
                event += 1
            }
            return 0
        }
        sampleRate = Int(rate)
        return Int(rate)
    }

    /// The one place espeak-ng's status codes become errors.
    static func check(_ status: espeak_ERROR, _ operation: String) throws {
        guard status != EE_OK else { return }
        throw VoiceError(.unavailable, provider: "espeak", message: "espeak-ng: \(operation) failed (status \(status.rawValue))")
    }

    func installedVoices() throws -> [(identifier: String, name: String, language: String, gender: Int)] {
        _ = try start()
        guard let list = espeak_ListVoices(nil) else { return [] }
        var result: [(String, String, String, Int)] = []
        var index = 0
        while let voice = list[index] {
            let languages = voice.pointee.languages.map { String(cString: $0 + 1) } ?? ""
            result.append(
                (
                    String(cString: voice.pointee.identifier), String(cString: voice.pointee.name), languages,
                    Int(voice.pointee.gender)
                ))
            index += 1
        }
        return result
    }

    /// Selects a voice by espeak-ng name or file (`en-us`, `gmw/en`), or by language code (`en-gb`), keeping a
    /// `+variant` suffix: espeak_SetVoiceByName knows only names and files, so language codes are resolved
    /// through espeak_SetVoiceByProperties and the variant is applied to the voice that was found.
    private func select(_ name: String) throws {
        if espeak_SetVoiceByName(name) == EE_OK { return }
        let parts = name.split(separator: "+", maxSplits: 1).map(String.init)
        var found = false
        parts[0].withCString { language in
            var properties = espeak_VOICE()
            properties.languages = language
            found = espeak_SetVoiceByProperties(&properties) == EE_OK
        }
        if found, parts.count == 2, let current = espeak_GetCurrentVoice()?.pointee.identifier {
            let base = String(cString: current).split(separator: "+").first.map(String.init) ?? ""
            found = espeak_SetVoiceByName(base + "+" + parts[1]) == EE_OK
        }
        guard found else {
            throw VoiceError(.voiceNotFound, provider: "espeak", message: "no espeak-ng voice \"\(name)\" (see `chorus voices --provider espeak`)")
        }
    }

    func currentVoiceIdentifier(for name: String) throws -> String {
        _ = try start()
        try select(name)
        return espeak_GetCurrentVoice()?.pointee.identifier.map { String(cString: $0) } ?? ""
    }

    func phonemeClauses(_ text: String, voice: String, ipa: @escaping (String) -> String) throws -> [EspeakEngine.PhonemeClause] {
        _ = try start()
        try select(voice)
        return EspeakEngine.clauses(of: text).map { clause in
            let marked = IPA.markupRanges(in: clause.text)
            guard marked.isEmpty else { return markedClause(clause, marked: marked, ipa: ipa) }
            let spoken = phonemes(of: clause.text).decomposedStringWithCanonicalMapping
            let words = WordAligner.words(in: clause.text)
            let alone =
                words.count == spoken.split(separator: " ").count
                ? nil : words.map { phonemes(of: $0.word).decomposedStringWithCanonicalMapping }
            return EspeakEngine.PhonemeClause(text: clause.text, mark: clause.mark, phonemes: spoken, wordPhonemes: alone)
        }
    }

    /// A clause with pronunciations in it (`[[IPA]]`, `IPA.markupRanges`): the text between them phonemized by espeak-ng,
    /// each pronunciation as `ipa` gives it (the voice's IPA), in order, words separated by spaces.
    private func markedClause(
        _ clause: (text: String, mark: Character?), marked: [Range<Int>],
        ipa: (String) -> String
    ) -> EspeakEngine.PhonemeClause {
        let scalars = Array(clause.text.unicodeScalars)
        func text(_ range: Range<Int>) -> String { String(String.UnicodeScalarView(scalars[range])) }
        var parts: [String] = []
        var position = 0
        for range in marked {
            parts.append(phonemes(of: text(position..<range.lowerBound)))
            parts.append(ipa(text((range.lowerBound + 2)..<(range.upperBound - 2))))
            position = range.upperBound
        }
        parts.append(phonemes(of: text(position..<scalars.count)))
        let spoken = parts.filter { !$0.isEmpty }.joined(separator: " ").decomposedStringWithCanonicalMapping
        let alone = WordAligner.words(in: clause.text).map { word -> String in
            if let range = marked.first(where: { $0.contains(word.range.lowerBound) }) {
                return ipa(text((range.lowerBound + 2)..<(range.upperBound - 2))).decomposedStringWithCanonicalMapping
            }
            return phonemes(of: word.word).decomposedStringWithCanonicalMapping
        }
        return EspeakEngine.PhonemeClause(text: clause.text, mark: clause.mark, phonemes: spoken, wordPhonemes: alone)
    }

    /// The IPA phonemes of `clause`: espeak-ng's, words separated by spaces (it reads all of the text it is given).
    private func phonemes(of clause: String) -> String {
        var parts: [String] = []
        let bytes = Array(clause.utf8) + [0]
        bytes.withUnsafeBufferPointer { buffer in
            var position: UnsafeRawPointer? = UnsafeRawPointer(buffer.baseAddress!)
            while let start = position, start.load(as: UInt8.self) != 0 {
                if let phonemes = espeak_TextToPhonemes(&position, Int32(espeakCHARS_UTF8), Int32(espeakPHONEMES_IPA)) {
                    let text = EspeakEngine.withoutLanguageFlags(String(cString: phonemes)).trimmingCharacters(in: .whitespaces)
                    if !text.isEmpty { parts.append(text) }
                }
                if position == start { break }  // espeak-ng read nothing: never loop on it
            }
        }
        return parts.joined(separator: " ")
    }

    func speak(_ text: String, voice: EspeakVoice) throws -> EspeakEngine.Output {
        let rate = try start()
        try select(voice.name)
        if let pitch = voice.pitch { try Self.check(espeak_SetParameter(espeakPITCH, Int32(pitch), 0), "espeak_SetParameter(pitch)") }
        if let range = voice.range { try Self.check(espeak_SetParameter(espeakRANGE, Int32(range), 0), "espeak_SetParameter(range)") }
        try Self.check(espeak_SetParameter(espeakRATE, Int32(voice.rate ?? Int(espeakRATE_NORMAL)), 0), "espeak_SetParameter(rate)")
        let collector = Collector()
        let context = Unmanaged.passUnretained(collector).toOpaque()
        // `[[…]]` is phonemes only in a text that has it (a message's own `[[` was broken up before: `TextNormalizer.spokenForm`).
        let flags = UInt32(espeakCHARS_UTF8) | (text.contains(IPA.open) ? UInt32(espeakPHONEMES) : 0)
        // Variants draw noise from libc's rand() while they speak: seeded, and alone with it (`SeededRandom`).
        let (status, synchronized) = SeededRandom.seeded {
            let status = withExtendedLifetime(collector) {
                text.withCString { pointer in
                    espeak_Synth(pointer, strlen(pointer) + 1, 0, POS_CHARACTER, 0, flags, nil, context)
                }
            }
            return (status, espeak_Synchronize())
        }
        try Self.check(status, "espeak_Synth")
        try Self.check(synchronized, "espeak_Synchronize")
        return EspeakEngine.Output(
            rate: rate, samples: collector.samples,
            words: collector.words.map { EspeakEngine.Word(position: $0.position, length: $0.length, milliseconds: $0.milliseconds) },
            clauseEnds: collector.clauseEnds)
    }
}

/// An espeak-ng voice spec: `name[+variant]` plus optional `?pitch=0…100&rate=80…450&range=0…100`.
struct EspeakVoice: Sendable, Equatable {
    var name: String
    var pitch: Int?
    var rate: Int?
    var range: Int?

    init(name: String, pitch: Int? = nil, rate: Int? = nil, range: Int? = nil) {
        self.name = name
        self.pitch = pitch
        self.rate = rate
        self.range = range
    }

    init(parsing spec: String) throws {
        let parts = spec.split(separator: "?", maxSplits: 1)
        name = String(parts.first ?? "")
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-+_".contains($0) }) else {
            throw VoiceError(.voiceNotFound, provider: "espeak", message: "\"\(spec)\" is not an espeak-ng voice name")
        }
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1)
                guard keyValue.count == 2, let value = Int(keyValue[1]) else {
                    throw VoiceError(.badRequest, provider: "espeak", message: "bad voice parameter \"\(pair)\" in \"\(spec)\"")
                }
                switch keyValue[0] {
                case "pitch" where (0...100).contains(value): pitch = value
                case "range" where (0...100).contains(value): range = value
                case "rate" where (80...450).contains(value): rate = value
                default:
                    throw VoiceError(
                        .badRequest, provider: "espeak",
                        message: "\"\(pair)\" in \"\(spec)\": use pitch=0…100, range=0…100, rate=80…450")
                }
            }
        }
    }

    var spec: String {
        var query: [String] = []
        if let pitch { query.append("pitch=\(pitch)") }
        if let rate { query.append("rate=\(rate)") }
        if let range { query.append("range=\(range)") }
        return query.isEmpty ? name : name + "?" + query.joined(separator: "&")
    }
}

public import ChorusWire
public import Foundation

/// Pronunciations for words no voice knows (`"lexicon"` in a conversation, or stored in the service): each entry an
/// alias, a respelling spoken in the word's place (`"Nguyen": "win"`), or the word's IPA (`{"ipa": "ʃɪˈvɔːn"}`), or
/// both; whole words only, matched case-insensitively unless the entry says otherwise (`"case_sensitive": true`).
/// Applied before synthesis for every provider: the IPA where the engine takes phonemes (Piper voices, espeak-ng:
/// `VoiceProvider.phonemeMarkup(voice:)`; Flite and ElevenLabs through a pronunciation dictionary), else the alias,
/// else the word as written. The words on screen stay the written ones (`SpokenForm.writtenWords`), and the cache is
/// keyed by what is spoken, so changing an entry re-synthesizes only the messages it touches.
///
/// ```swift
/// let lexicon = try Lexicon(entries: ["Nguyen": .init(alias: "win")], field: "lexicon")
/// lexicon.spoken("Ask Mrs Nguyen.").spoken   // "Ask Mrs win."
/// ```
public struct Lexicon: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// A respelling to say in the word's place.
        public var alias: String?
        /// The word in IPA (`IPA.validated`), for engines that take phonemes.
        public var ipa: String?
        public var caseSensitive: Bool

        public init(alias: String? = nil, ipa: String? = nil, caseSensitive: Bool = false) {
            self.alias = alias
            self.ipa = ipa
            self.caseSensitive = caseSensitive
        }

        /// The entry as JSON, the way it is written (a plain alias as a string): the one form stored, shown and hashed.
        public var json: JSONValue {
            if let alias, ipa == nil, !caseSensitive { return .string(alias) }
            var object: [String: JSONValue] = [:]
            if let alias { object["alias"] = .string(alias) }
            if let ipa { object["ipa"] = .string(ipa) }
            if caseSensitive { object["case_sensitive"] = .bool(true) }
            return .object(object)
        }
    }

    /// At most this many entries, each word and alias at most `maximumLength` characters.
    public static let maximumEntries = 10_000
    public static let maximumLength = 200

    public private(set) var entries: [String: Entry]
    /// Written word, lowercased → entry, for the case-insensitive entries.
    private var folded: [String: Entry] = [:]

    /// - Throws: `TextError` naming `field.WORD` and why: a key that is not one word, an entry with
    ///   neither alias nor IPA, an empty or wordless alias, IPA that is not IPA, too many or too long entries.
    public init(entries: [String: Entry], field: String) throws {
        guard entries.count <= Self.maximumEntries else {
            throw TextError(subject: field, reason: "\(entries.count) entries; at most \(Self.maximumEntries)")
        }
        var checked: [String: Entry] = [:]
        for (word, entry) in entries {
            let words = WordAligner.words(in: word)
            guard words.count == 1, words[0].word == word else {
                throw TextError(
                    subject: "\(field).\(word)",
                    reason: "an entry is one word as written, without spaces or surrounding punctuation")
            }
            guard word.count <= Self.maximumLength, (entry.alias?.count ?? 0) <= Self.maximumLength else {
                throw TextError(subject: "\(field).\(word)", reason: "at most \(Self.maximumLength) characters")
            }
            guard entry.alias != nil || entry.ipa != nil else {
                throw TextError(
                    subject: "\(field).\(word)", reason: "give an \"alias\" (a respelling), an \"ipa\" pronunciation, or both")
            }
            if let alias = entry.alias {
                guard !WordAligner.words(in: alias).isEmpty, !SpeechControls.contains(alias) else {
                    throw TextError(subject: "\(field).\(word)", reason: "the alias must be words to say")
                }
            }
            var entry = entry
            if let ipa = entry.ipa { entry.ipa = try IPA.validated(ipa, field: "\(field).\(word).ipa") }
            checked[word] = entry
        }
        self.entries = checked
        for (word, entry) in checked where !entry.caseSensitive { folded[word.lowercased()] = entry }
    }

    /// Reads a lexicon's JSON: each value an alias, or an object with `alias`, `ipa` (at least one) and `case_sensitive`.
    /// - Throws: `TextError` naming `field.WORD`.
    public init(json: [String: JSONValue], field: String) throws {
        var entries: [String: Entry] = [:]
        for (word, value) in json {
            switch value {
            case .string(let alias):
                entries[word] = Entry(alias: alias)
            case .object(let object):
                if let unknown = object.keys.sorted().first(where: { !["alias", "ipa", "case_sensitive"].contains($0) }) {
                    throw TextError(
                        subject: "\(field).\(word).\(unknown)", reason: "unknown field (known: alias, ipa, case_sensitive)")
                }
                func text(_ key: String) throws -> String? {
                    guard let value = object[key] else { return nil }
                    guard case .string(let text) = value else {
                        throw TextError(subject: "\(field).\(word).\(key)", reason: "must be a string")
                    }
                    return text
                }
                var caseSensitive = false
                if let flag = object["case_sensitive"] {
                    guard case .bool(let value) = flag else {
                        throw TextError(subject: "\(field).\(word).case_sensitive", reason: "must be true or false")
                    }
                    caseSensitive = value
                }
                entries[word] = Entry(alias: try text("alias"), ipa: try text("ipa"), caseSensitive: caseSensitive)
            default:
                throw TextError(
                    subject: "\(field).\(word)", reason: "must be an alias (a string) or {\"alias\": …, \"ipa\": …}")
            }
        }
        try self.init(entries: entries, field: field)
    }

    /// Reads a lexicon file: a JSON object of entries, as a conversation's `"lexicon"`.
    /// - Throws: `TextError` naming the file: missing or unreadable, not a JSON object, or an entry refused (`FILE.WORD`).
    public init(file: URL) throws {
        let name = file.lastPathComponent
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw TextError(.unreadable, subject: name, reason: "cannot read the lexicon file")
        }
        guard case .object(let entries)? = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            throw TextError(subject: name, reason: "is not a JSON object of pronunciations ({\"Nguyen\": \"win\"})")
        }
        try self.init(json: entries, field: name)
    }

    /// The lexicon as JSON (`Entry.json` per word): what the service stores and what a render id is computed from.
    public var json: [String: JSONValue] { entries.mapValues(\.json) }

    /// The entry for a written word: an exact case-sensitive one first, else a case-insensitive one.
    func entry(for word: String) -> Entry? {
        if let exact = entries[word], exact.caseSensitive { return exact }
        return folded[word.lowercased()]
    }

    /// `text` with every word that has an entry replaced by its alias (the word's surrounding punctuation kept), or by
    /// `phonemeMarkup` of its IPA when given one.
    public func spoken(_ text: String, phonemeMarkup: (@Sendable (String) -> String?)? = nil) -> SpokenForm {
        TextNormalizer.spokenForm(of: text, lexicon: self, normalize: false, phonemeMarkup: phonemeMarkup)
    }
}

/// A word said from its IPA by a provider that takes a pronunciation dictionary (ElevenLabs' phoneme rules).
public struct Pronunciation: Sendable, Hashable {
    public var word: String
    public var ipa: String
    public var caseSensitive: Bool

    public init(word: String, ipa: String, caseSensitive: Bool) {
        self.word = word
        self.ipa = ipa
        self.caseSensitive = caseSensitive
    }
}

/// A text as spoken, and which written word each replaced stretch of it stands for, so that words timed on the spoken
/// text are shown as written: "Ask Mrs win." spoken, "Nguyen" shown, timed where "win" was said.
public struct SpokenForm: Sendable, Equatable {
    public struct Replacement: Sendable, Equatable {
        /// The words as written (one for a lexicon entry or a normalized token; those of an SSML `sub` or `say-as`).
        public var written: [String]
        /// What was said instead, in `spoken` (Unicode scalars).
        public var range: Range<Int>
    }

    public var spoken: String
    public var replacements: [Replacement]
    /// Words left as written for the provider to say from their IPA (a pronunciation dictionary: ElevenLabs).
    public var pronunciations: [Pronunciation] = []

    public init(spoken: String, replacements: [Replacement], pronunciations: [Pronunciation] = []) {
        self.spoken = spoken
        self.replacements = replacements
        self.pronunciations = pronunciations
    }

    /// The pronunciations whose word is in `chunk` (a part of `spoken`), for that chunk's request.
    public func pronunciations(in chunk: String) -> [Pronunciation] {
        guard !pronunciations.isEmpty else { return [] }
        let words = WordAligner.words(in: chunk).map(\.word)
        let folded = Set(words.map { $0.lowercased() })
        let exact = Set(words)
        return pronunciations.filter { $0.caseSensitive ? exact.contains($0.word) : folded.contains($0.word.lowercased()) }
    }

    /// The written text's words for `timed`, one per word of `spoken` (`WordAligner.words(in: spoken)`, in order, as every
    /// provider's words are): the words of a replacement become its written words, from the first one's start to the
    /// last one's end (shared evenly when it stands for several). Timings that do not match `spoken`'s words one for one
    /// are returned as they are.
    public func writtenWords(_ timed: [WordTiming]) -> [WordTiming] {
        guard !replacements.isEmpty else { return timed }
        let words = WordAligner.words(in: spoken)
        guard words.count == timed.count else { return timed }
        var result: [WordTiming] = []
        var index = 0
        var next = 0  // the next replacement to meet, in order
        while index < words.count {
            while next < replacements.count && replacements[next].range.upperBound <= words[index].range.lowerBound { next += 1 }
            if next < replacements.count, replacements[next].range.contains(words[index].range.lowerBound) {
                let replacement = replacements[next]
                var last = index
                while last + 1 < words.count && replacement.range.contains(words[last + 1].range.lowerBound) { last += 1 }
                let (start, end) = (timed[index].start, timed[last].end)
                let share = (end - start) / Double(max(1, replacement.written.count))
                for (position, word) in replacement.written.enumerated() {
                    result.append(WordTiming(word: word, start: start + Double(position) * share, end: start + Double(position + 1) * share))
                }
                index = last + 1
                next += 1
            } else {
                result.append(timed[index])
                index += 1
            }
        }
        return result
    }
}

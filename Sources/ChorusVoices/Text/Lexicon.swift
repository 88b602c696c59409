public import ChorusAudio
import Foundation

/// Pronunciations for words no voice knows (`"lexicon"` in a conversation): each entry an alias, a respelling spoken
/// in the word's place (`"Nguyen": "win"`), whole words only, matched case-insensitively unless the entry says
/// otherwise (`{"alias": "Reading", "case_sensitive": true}`). Applied before synthesis for every provider; the words
/// on screen stay the written ones (`SpokenForm.writtenWords`), and the cache is keyed by what is spoken, so changing
/// an entry re-synthesizes only the messages it touches.
///
/// ```swift
/// let lexicon = try Lexicon(entries: ["Nguyen": .alias("win")], field: "lexicon")
/// lexicon.spoken("Ask Mrs Nguyen.").spoken   // "Ask Mrs win."
/// ```
public struct Lexicon: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var alias: String
        public var caseSensitive: Bool

        public init(alias: String, caseSensitive: Bool = false) {
            self.alias = alias
            self.caseSensitive = caseSensitive
        }
    }

    /// At most this many entries, each word and alias at most `maximumLength` characters.
    public static let maximumEntries = 10_000
    public static let maximumLength = 200

    public private(set) var entries: [String: Entry]
    /// Written word, lowercased → entry, for the case-insensitive entries.
    private var folded: [String: Entry] = [:]

    /// - Throws: `AudioError.invalidConversation` naming `field.WORD` and why: a key that is not one word, an empty or
    ///   wordless alias, too many or too long entries.
    public init(entries: [String: Entry], field: String) throws {
        guard entries.count <= Self.maximumEntries else {
            throw AudioError(.invalidConversation, subject: field, reason: "\(entries.count) entries; at most \(Self.maximumEntries)")
        }
        for (word, entry) in entries {
            let words = WordAligner.words(in: word)
            guard words.count == 1, words[0].word == word else {
                throw AudioError(.invalidConversation, subject: "\(field).\(word)", reason: "an entry is one word as written, without spaces or surrounding punctuation")
            }
            guard word.count <= Self.maximumLength, entry.alias.count <= Self.maximumLength else {
                throw AudioError(.invalidConversation, subject: "\(field).\(word)", reason: "at most \(Self.maximumLength) characters")
            }
            guard !WordAligner.words(in: entry.alias).isEmpty, !SpeechControls.contains(entry.alias) else {
                throw AudioError(.invalidConversation, subject: "\(field).\(word)", reason: "the alias must be words to say")
            }
        }
        self.entries = entries
        for (word, entry) in entries where !entry.caseSensitive { folded[word.lowercased()] = entry }
    }

    /// Reads a lexicon's JSON: each value an alias, or `{"alias": …, "case_sensitive": true}`; `{"ipa": …}` is refused
    /// for now (no engine here takes IPA for one word yet: give a respelling).
    /// - Throws: `AudioError.invalidConversation` naming `field.WORD`.
    public init(json: [String: JSONValue], field: String) throws {
        var entries: [String: Entry] = [:]
        for (word, value) in json {
            switch value {
            case .string(let alias):
                entries[word] = Entry(alias: alias)
            case .object(let object):
                if object["ipa"] != nil {
                    throw AudioError(.invalidConversation, subject: "\(field).\(word).ipa",
                                     reason: "IPA entries are not supported yet; give the word's respelling as \"alias\"")
                }
                if let unknown = object.keys.sorted().first(where: { !["alias", "case_sensitive"].contains($0) }) {
                    throw AudioError(.invalidConversation, subject: "\(field).\(word).\(unknown)", reason: "unknown field (known: alias, case_sensitive)")
                }
                guard case .string(let alias)? = object["alias"] else {
                    throw AudioError(.invalidConversation, subject: "\(field).\(word).alias", reason: "missing: the respelling to say")
                }
                var caseSensitive = false
                if let flag = object["case_sensitive"] {
                    guard case .bool(let value) = flag else {
                        throw AudioError(.invalidConversation, subject: "\(field).\(word).case_sensitive", reason: "must be true or false")
                    }
                    caseSensitive = value
                }
                entries[word] = Entry(alias: alias, caseSensitive: caseSensitive)
            default:
                throw AudioError(.invalidConversation, subject: "\(field).\(word)", reason: "must be an alias (a string) or {\"alias\": …}")
            }
        }
        try self.init(entries: entries, field: field)
    }

    /// The entry for a written word: an exact case-sensitive one first, else a case-insensitive one.
    func entry(for word: String) -> Entry? {
        if let exact = entries[word], exact.caseSensitive { return exact }
        return folded[word.lowercased()]
    }

    /// `text` with every word that has an entry replaced by its alias (the word's surrounding punctuation kept).
    public func spoken(_ text: String) -> SpokenForm {
        TextNormalizer.spokenForm(of: text, lexicon: self, normalize: false)
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
        var next = 0   // the next replacement to meet, in order
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

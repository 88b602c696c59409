import ChorusSupport
import ChorusWire
import Foundation

/// Text as people read it aloud, before synthesis (English): scripture references ("John 3:16" → "John chapter three,
/// verse sixteen"; "1 Cor 13:4–7" → "First Corinthians chapter thirteen, verses four to seven"), times ("7:15 pm"),
/// money ("$12.50"), percentages, ordinals ("22nd"), decimals, years, numbers, dates ("3/14"), phone numbers, common
/// abbreviations ("Dr.", "St.", "Mon"), emoji dropped.
///
/// Each written word is replaced on its own (`SpokenForm.Replacement`), so the timeline keeps the written tokens:
/// "3:16" is one word whose time spans "chapter three, verse sixteen". Rules are per language behind
/// `NormalizationRules`; English's (`EnglishRules`) are the ones there are.
public enum TextNormalizer {
    /// The languages there are rules for (`TextReading.language`'s primary subtag → its rules). Another language's
    /// rules are a type conforming to `NormalizationRules`, added here: the pipeline does not change.
    static let rules: [String: any NormalizationRules.Type] = ["en": EnglishRules.self]
    public static var languages: [String] { rules.keys.sorted() }

    /// `text` as spoken: the lexicon's entries first (a user's entry wins), then, with `normalize`, the rules.
    public static func spokenForm(
        of text: String, lexicon: Lexicon?, normalize: Bool, reading: TextReading = TextReading(),
        phonemeMarkup: (@Sendable (String) -> String?)? = nil,
        dictionary: (@Sendable (Pronunciation) -> Bool)? = nil
    ) -> SpokenForm {
        spokenForm(
            of: [SSML.Run(written: text, spoken: nil)], lexicon: lexicon, normalize: normalize, reading: reading,
            phonemeMarkup: phonemeMarkup, dictionary: dictionary)
    }

    /// Runs of written text as spoken: a run with its own reading (SSML's `sub`, `say-as`, `phoneme`) says that for its
    /// words; the other words get the lexicon's entries, then, with `normalize`, the rules.
    ///
    /// A pronunciation in IPA (a lexicon entry's, a `phoneme`'s) is said through `phonemeMarkup` — the provider's
    /// phoneme input (`VoiceProvider.phonemeMarkup(_:)`), `nil` when it has none — else the entry's alias, else the word
    /// as written; a pronunciation `dictionary` takes (the provider's pronunciation dictionary:
    /// `VoiceProvider.pronunciationDictionary(settings:)`) leaves the word as written and goes into
    /// `SpokenForm.pronunciations`. When there is phoneme input, no `[[` reaches the provider but the markup's own:
    /// every other `[` after a `[` — of the text, an alias, a reading — gets a space before it (the one owner of that rule).
    ///
    /// With `normalize`, the rules are those of `reading.language` (none for a language without rules), and emoji
    /// between words are dropped or said by name (`reading.emoji`; a name is never a word on screen).
    public static func spokenForm(
        of runs: [SSML.Run], lexicon: Lexicon?, normalize: Bool, reading: TextReading = TextReading(),
        phonemeMarkup: (@Sendable (String) -> String?)? = nil,
        dictionary: (@Sendable (Pronunciation) -> Bool)? = nil
    ) -> SpokenForm {
        var plan = SpokenPlan(text: runs.map(\.written).joined(), phonemeMarkup: phonemeMarkup, dictionary: dictionary)
        plan.readings(of: runs)
        plan.lexiconEntries(lexicon)
        if phonemeMarkup != nil { plan.bracketedWords() }
        if normalize, let rules = Self.rules[reading.primaryLanguage] { plan.rules(rules) }
        if normalize && reading.emoji == .name { plan.emojiNames() }
        return plan.spoken(droppingEmoji: normalize)
    }

    /// Emoji and what joins them (dropped from what is spoken; they are never words on screen).
    static func isEmoji(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isEmojiPresentation || scalar.value == 0xFE0F || scalar.value == 0x200D
            || (0x1F3FB...0x1F3FF).contains(scalar.value)
            || (scalar.properties.isEmoji && scalar.value > 0x2000 && scalar.value != 0x20E3
                && !(0x2190...0x21FF).contains(scalar.value))
    }
}

/// What `TextNormalizer.spokenForm` says for each word or run of one text, planned step by step (each step leaves the
/// words an earlier one took), then written out with the replacements' ranges.
private struct SpokenPlan {
    typealias Planned = (words: [Int], range: Range<Int>, spoken: String, markup: Bool)

    let scalars: [Unicode.Scalar]
    let words: [WordAligner.TextWord]
    let phonemeMarkup: (@Sendable (String) -> String?)?
    let dictionary: (@Sendable (Pronunciation) -> Bool)?
    /// Whether each scalar is inside a written word.
    let inWord: [Bool]
    private var planned: [Planned] = []
    private var taken = Set<Int>()
    private var pronunciations: [Pronunciation] = []

    init(text: String, phonemeMarkup: (@Sendable (String) -> String?)?, dictionary: (@Sendable (Pronunciation) -> Bool)?) {
        scalars = Array(text.unicodeScalars)
        words = WordAligner.words(in: text)
        self.phonemeMarkup = phonemeMarkup
        self.dictionary = dictionary
        var inWord = [Bool](repeating: false, count: scalars.count)
        for word in words { for offset in word.range { inWord[offset] = true } }
        self.inWord = inWord
    }

    /// A pronunciation for `dictionary`, of the word as written here (what a dictionary's rule matches), if it takes it.
    private mutating func kept(_ word: String, ipa: String) -> Bool {
        let pronunciation = Pronunciation(word: word, ipa: ipa, caseSensitive: true)
        guard let dictionary, dictionary(pronunciation) else { return false }
        if !pronunciations.contains(pronunciation) { pronunciations.append(pronunciation) }
        return true
    }

    /// The provider's markup for `ipa`, when it is one word as words are counted (`[[@]]` is none: its alias instead).
    private func said(ipa: String) -> String? {
        phonemeMarkup?(ipa).flatMap { WordAligner.words(in: $0).count == 1 ? $0 : nil }
    }

    /// Runs with their own reading (SSML's `sub`, `say-as`, `phoneme`) say it for their words.
    mutating func readings(of runs: [SSML.Run]) {
        var offset = 0
        for run in runs {
            let count = run.written.unicodeScalars.count
            defer { offset += count }
            if let ipa = run.ipa {
                let inside = WordAligner.words(in: run.written)
                if inside.count == 1, kept(inside[0].word, ipa: ipa) {
                    let lower = offset + inside[0].range.lowerBound
                    taken.formUnion(words.indices.filter { words[$0].range.lowerBound == lower })
                    continue
                }
            }
            let markup = run.ipa.flatMap(said(ipa:))
            guard let said = markup ?? run.spoken else { continue }
            var lower = offset
            var upper = offset + count
            while lower < upper && scalars[lower].properties.isWhitespace { lower += 1 }
            while upper > lower && scalars[upper - 1].properties.isWhitespace { upper -= 1 }
            let inside = words.indices.filter { words[$0].range.lowerBound >= lower && words[$0].range.upperBound <= upper }
            planned.append((inside, lower..<upper, lower == upper ? " " + said + " " : said, markup != nil))
            taken.formUnion(inside)
        }
    }

    /// The lexicon's entries for the words left (a user's entry wins over the rules).
    mutating func lexiconEntries(_ lexicon: Lexicon?) {
        for (index, word) in words.enumerated() where !taken.contains(index) {
            guard let entry = lexicon?.entry(for: word.word) else { continue }
            if let ipa = entry.ipa, kept(word.word, ipa: ipa) {
                taken.insert(index)
                continue
            }
            let markup = entry.ipa.flatMap(said(ipa:))
            guard let said = markup ?? entry.alias else { continue }
            planned.append(([index], word.range, said, markup != nil))
            taken.insert(index)
        }
    }

    /// A word with "[[" inside, where that would be phoneme input: a replacement, so that said with its brackets apart
    /// it is still shown as written.
    mutating func bracketedWords() {
        for (index, word) in words.enumerated()
        where !taken.contains(index) && word.word.contains(IPA.open)
            && !planned.contains(where: { $0.range.overlaps(word.range) })
        {
            planned.append(([index], word.range, word.word, false))  // `spoken` spaces the brackets apart
            taken.insert(index)
        }
    }

    /// The language's rules for the words left.
    mutating func rules(_ rules: any NormalizationRules.Type) {
        for replacement in rules.init(scalars: scalars, words: words).replacements() where !taken.contains(replacement.word) {
            planned.append(([replacement.word], replacement.range, replacement.spoken, false))
        }
    }

    /// Emoji between words said by name: a run of them, one name per cluster; no written word stands for it.
    mutating func emojiNames() {
        var offset = 0
        while offset < scalars.count {
            guard !inWord[offset], TextNormalizer.isEmoji(scalars[offset]), scalars[offset].value != 0x200D, scalars[offset].value != 0xFE0F else {
                offset += 1
                continue
            }
            var end = offset
            while end < scalars.count, !inWord[end], TextNormalizer.isEmoji(scalars[end]) || scalars[end].properties.isWhitespace { end += 1 }
            while end > offset, scalars[end - 1].properties.isWhitespace { end -= 1 }
            let run = String(String.UnicodeScalarView(scalars[offset..<end]))
            let names = run.filter { !$0.isWhitespace }.compactMap { EmojiNames.spoken(Array($0.unicodeScalars)) }
            if !names.isEmpty, !planned.contains(where: { $0.range.overlaps(offset..<end) }) {
                planned.append(([], offset..<end, " " + names.joined(separator: ", ") + " ", false))
            }
            offset = end
        }
    }

    /// The text as spoken, with each replacement's range; emoji between words dropped when `droppingEmoji` (one inside
    /// a word, of letters and emoji, stays, so the word does too). With phoneme input, no `[[` reaches the provider but
    /// the markup's own: every other "[" after a "[" gets a space before it (the one owner of that rule).
    func spoken(droppingEmoji: Bool) -> SpokenForm {
        var spoken = String.UnicodeScalarView()
        var replacements: [SpokenForm.Replacement] = []
        var position = 0
        var length = 0
        let escaping = phonemeMarkup != nil
        /// Appends `said` (markup as it is; anything else with a space before every "[" that follows a "["); its range.
        func emit<S: Sequence<Unicode.Scalar>>(_ said: S, markup: Bool) -> Range<Int> {
            var start = length
            for (index, scalar) in said.enumerated() {
                if escaping, scalar == "[", spoken.last == "[", !markup || index == 0 {
                    spoken.append(" ")
                    length += 1
                    if index == 0 { start = length }
                }
                spoken.append(scalar)
                length += 1
            }
            return start..<length
        }
        func copy(upTo end: Int) {
            for offset in position..<end where !(droppingEmoji && !inWord[offset] && TextNormalizer.isEmoji(scalars[offset])) {
                _ = emit(CollectionOfOne(scalars[offset]), markup: false)
            }
        }
        for plan in planned.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) where plan.range.lowerBound >= position {
            copy(upTo: plan.range.lowerBound)
            let range = emit(plan.spoken.unicodeScalars, markup: plan.markup)
            replacements.append(SpokenForm.Replacement(written: plan.words.map { words[$0].word }, range: range))
            position = plan.range.upperBound
        }
        copy(upTo: scalars.count)
        return SpokenForm(spoken: String(spoken), replacements: replacements, pronunciations: pronunciations)
    }
}

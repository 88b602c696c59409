import Foundation

/// A word's pronunciation in the International Phonetic Alphabet (a lexicon's `{"ipa": "ʃɪˈvɔːn"}`, SSML's
/// `<phoneme alphabet="ipa" ph="…">`), and how each engine that takes phonemes is given it: Piper voices read IPA
/// itself (espeak-ng's flavour: stress before the vowel, `ɹ`, `ɡ`), espeak-ng its own phoneme mnemonics between
/// `[[` and `]]`. The rules of what is accepted and of each conversion live here, once.
public enum IPA {
    /// Bumped when a conversion to an engine's phonemes changes (the synthesis cache keys of pronunciations carry it).
    public static let revision = 1

    /// The most Unicode scalars (letters, marks and diacritics each count) a pronunciation may have.
    public static let maximumLength = 200

    /// The stress marks, the length mark and the syllable break.
    static let primaryStress: Unicode.Scalar = "ˈ", secondaryStress: Unicode.Scalar = "ˌ", length: Unicode.Scalar = "ː"

    /// `ipa` checked: one word (no white space), letters of the IPA with its marks and diacritics only.
    /// - Throws: `TextError` naming `field` and the first character that is not IPA.
    public static func validated(_ ipa: String, field: String) throws -> String {
        let trimmed = ipa.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        guard !trimmed.isEmpty else { throw TextError(subject: field, reason: "the pronunciation is empty") }
        guard trimmed.unicodeScalars.count <= maximumLength else {
            throw TextError(subject: field, reason: "at most \(maximumLength) characters")
        }
        for (offset, scalar) in trimmed.unicodeScalars.enumerated() where !isIPA(scalar) {
            let shown = scalar.properties.isWhitespace ? "a space" : "\"\(scalar)\" (U+\(String(scalar.value, radix: 16, uppercase: true)))"
            throw TextError(
                subject: field,
                reason: "\(shown) at character \(offset + 1) is not IPA (one word in the International Phonetic Alphabet, e.g. \"ʃɪˈvɔːn\")")
        }
        guard trimmed.unicodeScalars.contains(where: { vowels.contains($0) || consonants[String($0)] != nil }) else {
            throw TextError(subject: field, reason: "no sounds in \"\(trimmed)\"")
        }
        return trimmed
    }

    /// Lowercase letters (Latin, IPA extensions, a few Greek ones the IPA uses), modifier letters and marks, combining
    /// diacritics, the syllable break and the tie bar.
    static func isIPA(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .lowercaseLetter, .modifierLetter, .nonspacingMark, .otherLetter:
            return scalar.value < 0x0400 || (0x1D00...0x1DBF).contains(scalar.value)
        case .modifierSymbol:
            return (0x02B0...0x02FF).contains(scalar.value)
        default:
            return scalar == "." || scalar == "‿" || scalar == "͡"
        }
    }

    /// The IPA vowels (each a syllable's nucleus: where a stress mark belongs for Piper).
    static let vowels: Set<Unicode.Scalar> = Set("aeiouyæɑɐɒɔəɘɚɛɜɝɞɤɨɪʉʊʌʏøœɶɵᵻ".unicodeScalars)

    /// English consonants in espeak-ng's mnemonics (the affricates first in `sounds(of:vowels:consonants:)`).
    static let consonants: [String: String] = [
        "tʃ": "tS", "dʒ": "dZ",
        "p": "p", "b": "b", "t": "t", "d": "d", "k": "k", "g": "g", "ɡ": "g", "f": "f", "v": "v", "θ": "T", "ð": "D", "s": "s",
        "z": "z", "ʃ": "S", "ʒ": "Z", "h": "h", "m": "m", "n": "n", "ŋ": "N", "l": "l", "ɫ": "l", "ɹ": "r", "r": "r", "ɾ": "t",
        "ɻ": "r", "j": "j", "w": "w", "ʍ": "w", "x": "x", "ʔ": "?", "ç": "h", "ɬ": "l", "ʁ": "r", "χ": "x", "ɲ": "n", "ʎ": "l",
        "c": "k", "ɟ": "g", "q": "k", "ɣ": "g", "β": "v", "ɸ": "f", "ɱ": "m",
    ]

    /// Vowels and diphthongs (longest first when read) in espeak-ng's English mnemonics.
    static let espeakVowels: [(ipa: String, value: String)] = [
        ("aɪə", "aI@"), ("aʊə", "aU@"),
        ("eɪ", "eI"), ("aɪ", "aI"), ("ɔɪ", "OI"), ("oʊ", "oU"), ("əʊ", "oU"), ("aʊ", "aU"), ("ɪə", "i@"), ("iə", "i@"),
        ("eə", "e@"), ("ɛə", "e@"), ("ʊə", "U@"), ("ɑɹ", "A@"), ("ɔɹ", "O@"), ("ɪɹ", "i@"), ("ɛɹ", "e@"), ("ʊɹ", "U@"),
        ("iː", "i:"), ("uː", "u:"), ("ɑː", "A:"), ("ɔː", "O:"), ("ɜː", "3:"), ("ɝː", "3:"), ("aː", "A:"), ("eː", "eI"), ("oː", "oU"),
        ("i", "i"), ("ɪ", "I"), ("e", "E"), ("ɛ", "E"), ("æ", "a"), ("a", "a"), ("ɑ", "A:"), ("ɒ", "0"), ("ɔ", "O:"), ("o", "oU"),
        ("ʊ", "U"), ("u", "u:"), ("ʌ", "V"), ("ə", "@"), ("ɚ", "3"), ("ɝ", "3:"), ("ɜ", "3:"), ("ɐ", "a#"), ("ᵻ", "I2"), ("ɨ", "I2"),
        ("y", "u:"), ("ʏ", "U"), ("ø", "3:"), ("œ", "3:"), ("ɘ", "@"), ("ɵ", "@"), ("ɤ", "V"), ("ʉ", "u:"), ("ɞ", "3:"), ("ɶ", "a"),
    ]

    /// `ipa` (validated) in espeak-ng's phoneme mnemonics for its English voices (`ʃɪˈvɔːn` → `SI'vO:n`): stress marks
    /// kept where they are (espeak-ng stresses the next vowel), diacritics, the syllable break and ties dropped, the
    /// consonants and vowels of other languages as their nearest English ones.
    public static func espeakMnemonics(_ ipa: String) -> String {
        sounds(of: ipa, vowels: espeakVowels, consonants: consonants).map { sound in
            switch sound {
            case .stress(let primary): primary ? "'" : ","
            case .vowel(let mnemonic), .consonant(let mnemonic): mnemonic
            }
        }.joined()
    }

    /// A sound of an IPA word, as a table gives it.
    enum Sound<Vowel> {
        case stress(primary: Bool)
        case vowel(Vowel)
        case consonant(String)
    }

    /// The sounds of `ipa` (validated), read left to right: stress marks; the longest of `vowels` (their scalars) that
    /// starts here; `tʃ`, `dʒ` or one consonant of `consonants`. Diacritics, syllable breaks, ties and stray length
    /// marks are not said apart: skipped.
    static func sounds<Vowel>(of ipa: String, vowels: [(ipa: String, value: Vowel)], consonants: [String: String]) -> [Sound<Vowel>] {
        let scalars = Array(ipa.decomposedStringWithCanonicalMapping.unicodeScalars).filter { $0 != "͡" }
        let patterns = vowels.map { (Array($0.ipa.unicodeScalars), $0.value) }
        var result: [Sound<Vowel>] = []
        var index = 0
        outer: while index < scalars.count {
            let scalar = scalars[index]
            if scalar == primaryStress || scalar == secondaryStress {
                result.append(.stress(primary: scalar == primaryStress))
                index += 1
                continue
            }
            for (pattern, value) in patterns where scalars[index...].starts(with: pattern) {
                result.append(.vowel(value))
                index += pattern.count
                continue outer
            }
            if index + 1 < scalars.count, let affricate = consonants[String(String.UnicodeScalarView(scalars[index...(index + 1)]))] {
                result.append(.consonant(affricate))
                index += 2
                continue
            }
            if let consonant = consonants[String(scalar)] { result.append(.consonant(consonant)) }
            index += 1
        }
        return result
    }

    /// Vowels and diphthongs (longest first when read) as CMU dictionary phones (Flite's lexicon), before their stress
    /// digit; British centring diphthongs as their US r-coloured vowels.
    static let cmuVowels: [(ipa: String, value: [String])] = [
        ("eɪ", ["ey"]), ("aɪ", ["ay"]), ("ɔɪ", ["oy"]), ("oʊ", ["ow"]), ("əʊ", ["ow"]), ("aʊ", ["aw"]), ("ɪə", ["ih", "r"]),
        ("iə", ["ih", "r"]), ("eə", ["eh", "r"]), ("ɛə", ["eh", "r"]), ("ʊə", ["uh", "r"]),
        ("iː", ["iy"]), ("uː", ["uw"]), ("ɑː", ["aa"]), ("ɔː", ["ao"]), ("ɜː", ["er"]), ("ɝː", ["er"]), ("aː", ["aa"]), ("eː", ["ey"]),
        ("oː", ["ow"]),
        ("i", ["iy"]), ("ɪ", ["ih"]), ("e", ["eh"]), ("ɛ", ["eh"]), ("æ", ["ae"]), ("a", ["aa"]), ("ɑ", ["aa"]), ("ɒ", ["aa"]), ("ɔ", ["ao"]),
        ("o", ["ow"]), ("ʊ", ["uh"]), ("u", ["uw"]), ("ʌ", ["ah"]), ("ə", ["ah"]), ("ɚ", ["er"]), ("ɝ", ["er"]), ("ɜ", ["er"]), ("ɐ", ["ah"]),
        ("ᵻ", ["ih"]), ("ɨ", ["ih"]), ("y", ["uw"]), ("ʏ", ["uh"]), ("ø", ["er"]), ("œ", ["er"]), ("ɘ", ["ah"]), ("ɵ", ["ah"]), ("ɤ", ["ah"]),
        ("ʉ", ["uw"]), ("ɞ", ["er"]), ("ɶ", ["aa"]),
    ]

    /// English consonants as CMU dictionary phones.
    static let cmuConsonants: [String: String] = [
        "tʃ": "ch", "dʒ": "jh",
        "p": "p", "b": "b", "t": "t", "d": "d", "k": "k", "g": "g", "ɡ": "g", "f": "f", "v": "v", "θ": "th", "ð": "dh", "s": "s",
        "z": "z", "ʃ": "sh", "ʒ": "zh", "h": "hh", "m": "m", "n": "n", "ŋ": "ng", "l": "l", "ɫ": "l", "ɹ": "r", "r": "r", "ɾ": "t",
        "ɻ": "r", "j": "y", "w": "w", "ʍ": "w", "x": "k", "ʔ": "t", "ç": "hh", "ɬ": "l", "ʁ": "r", "χ": "k", "ɲ": "n", "ʎ": "l",
        "c": "k", "ɟ": "g", "q": "k", "ɣ": "g", "β": "v", "ɸ": "f", "ɱ": "m",
    ]

    /// `ipa` (validated) as CMU dictionary phones for Flite's lexicon (`ʃɪˈvɔːn` → `sh ih0 v ao1 n`): each vowel with its
    /// stress (1 after `ˈ`, else 0: Flite's lexicon has no secondary stress, and refuses — printing to standard output —
    /// a phone it does not have), `tʃ`/`dʒ` as `ch`/`jh`, other languages' sounds as their nearest.
    public static func cmuPhones(_ ipa: String) -> [String] {
        var phones: [String] = []
        var stress = 0
        for sound in sounds(of: ipa, vowels: cmuVowels, consonants: cmuConsonants) {
            switch sound {
            case .stress(let primary): stress = primary ? 1 : 0
            case .vowel(let mapped):
                phones.append(mapped[0] + String(stress))
                phones += mapped.dropFirst()
                stress = 0
            case .consonant(let phone): phones.append(phone)
            }
        }
        return phones
    }

    /// `ipa` (validated) as Piper voices read it: espeak-ng's IPA, which they were trained on — each stress mark moved
    /// to just before its syllable's vowel, `g` as `ɡ`, and (for English voices) `r` as `ɹ` — in canonical
    /// decomposition, keeping only the symbols in `known` (the voice's phoneme table).
    public static func piperPhonemes(_ ipa: String, english: Bool, known: Set<Unicode.Scalar>) -> String {
        var scalars: [Unicode.Scalar] = []
        var pendingStress: Unicode.Scalar?
        for scalar in ipa.decomposedStringWithCanonicalMapping.unicodeScalars {
            var mapped = scalar
            if scalar == "g" { mapped = "ɡ" }
            if scalar == "r" && english { mapped = "ɹ" }
            if scalar == "ɝ" && !known.contains("ɝ") {
                scalars += ["ɜ", "ː"]
                continue
            }
            if scalar == "." || scalar == "‿" || scalar == "͡" { continue }  // a syllable break is no pause (Piper's "." is a full stop)
            if mapped == primaryStress || mapped == secondaryStress {
                pendingStress = mapped
                continue
            }
            if vowels.contains(mapped), let stress = pendingStress {
                scalars.append(stress)
                pendingStress = nil
            }
            scalars.append(mapped)
        }
        return String(String.UnicodeScalarView(scalars.filter { known.isEmpty || known.contains($0) }))
    }

    /// The opening and closing of a pronunciation inside a text sent to an engine that takes phonemes
    /// (`VoiceProvider.phonemeMarkup(voice:)`): espeak-ng's own syntax, which Chorus uses for Piper voices too.
    public static let open = "[[", close = "]]"

    /// The stretches of `text` (Unicode scalar offsets) between `[[` and `]]`, markup included.
    public static func markupRanges(in text: String) -> [Range<Int>] {
        let scalars = Array(text.unicodeScalars)
        var ranges: [Range<Int>] = []
        var index = 0
        while index + 1 < scalars.count {
            if scalars[index] == "[", scalars[index + 1] == "[" {
                var end = index + 2
                while end + 1 < scalars.count, !(scalars[end] == "]" && scalars[end + 1] == "]") { end += 1 }
                guard end + 1 < scalars.count else { break }
                ranges.append(index..<(end + 2))
                index = end + 2
            } else {
                index += 1
            }
        }
        return ranges
    }
}

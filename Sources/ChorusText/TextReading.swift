/// How a conversation's text is read before synthesis, besides whether it is normalized: the language it is written in
/// (`"language"`, which chooses the normalizer's rules: `TextNormalizer.languages`) and what becomes of emoji between
/// words (`"emoji"`: dropped, or said by name).
public struct TextReading: Sendable, Equatable {
    public enum Emoji: String, Sendable, CaseIterable {
        /// Not said (the default).
        case drop
        /// Said by its name ("thumbs up"); never a word on screen.
        case name
    }

    /// A language tag (`en`, `en-gb`, `de`; lowercased), its primary subtag choosing the rules.
    public var language: String
    public var emoji: Emoji

    public static let defaultLanguage = "en"

    public init(language: String = TextReading.defaultLanguage, emoji: Emoji = .drop) {
        self.language = language
        self.emoji = emoji
    }

    /// The language the conversation says its text is in, `nil` when it says none (the default).
    public var statedLanguage: String? { language == Self.defaultLanguage ? nil : language }

    /// The language's primary subtag, lowercased (`en-GB` → `en`).
    public var primaryLanguage: String { String(language.split(separator: "-").first ?? "").lowercased() }

    /// The one reading of `language` and `emoji` (conversation files and the service).
    /// - Throws: `TextError` naming the field: a language that is not a tag, an unknown emoji mode.
    public static func validated(language: String?, emoji: String?) throws -> TextReading {
        var reading = TextReading()
        if let language {
            let parts = language.split(separator: "-", omittingEmptySubsequences: false)
            guard language.count <= 35, let primary = parts.first, (2...3).contains(primary.count), primary.allSatisfy({ $0.isASCII && $0.isLetter }),
                parts.dropFirst().allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } })
            else {
                throw TextError(
                    subject: "language", reason: "\"\(language.prefix(40))\" is not a language tag (en, en-GB, de)")
            }
            reading.language = language.lowercased()  // tags are case-insensitive: one spelling, one render id
        }
        if let emoji {
            guard let mode = Emoji(rawValue: emoji) else {
                throw TextError(
                    subject: "emoji",
                    reason: "\"\(emoji.prefix(40))\": \(Emoji.allCases.map(\.rawValue).joined(separator: " or "))")
            }
            reading.emoji = mode
        }
        return reading
    }
}

/// Emoji said by name.
enum EmojiNames {
    /// Names people say for the most used emoji where Unicode's differs ("HEAVY BLACK HEART" is said "red heart").
    static let common: [UInt32: String] = [
        0x2764: "red heart", 0x1F44D: "thumbs up", 0x1F44E: "thumbs down", 0x1F64F: "folded hands", 0x1F602: "face with tears of joy",
        0x1F60D: "heart eyes", 0x1F62D: "crying face", 0x1F60A: "smiling face", 0x263A: "smiling face", 0x1F618: "blowing a kiss",
        0x1F44F: "clapping hands", 0x1F4AF: "hundred points", 0x1F64C: "raising hands", 0x1F923: "rolling on the floor laughing",
        0x1F609: "winking face", 0x1F525: "fire", 0x2728: "sparkles", 0x1F389: "party popper", 0x1F382: "birthday cake",
        0x1F60E: "smiling face with sunglasses", 0x1F914: "thinking face", 0x1F917: "hugging face", 0x1F937: "shrug",
        0x1F926: "facepalm", 0x1F44B: "waving hand", 0x270C: "victory hand", 0x1F440: "eyes", 0x1F480: "skull",
    ]

    /// What is said for one emoji cluster (a `Character`): the name of each of its emoji (people in a family, each
    /// one), skin tones, variation selectors and joiners left out; a flag (two regional indicators) is "flag".
    static func spoken(_ scalars: [Unicode.Scalar]) -> String? {
        if scalars.contains(where: { (0x1F1E6...0x1F1FF).contains($0.value) }) { return "flag" }
        var names: [String] = []
        for scalar in scalars {
            guard TextNormalizer.isEmoji(scalar), scalar.value != 0xFE0F, scalar.value != 0x200D,
                !(0x1F3FB...0x1F3FF).contains(scalar.value)
            else { continue }
            let name = common[scalar.value] ?? scalar.properties.name.map { $0.lowercased() }
            if let name, !names.contains(name) { names.append(name) }
        }
        return names.isEmpty ? nil : names.joined(separator: " ")
    }
}

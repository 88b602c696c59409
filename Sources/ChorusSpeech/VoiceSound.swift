/// What a voice sounds like, or what a conversation says one of its speakers sounds like
/// (`"speakers": {"Mom": {"sounds": "female"}}`): speakers without a voice get a default voice that sounds so
/// (`VoiceAssignment`).
public enum VoiceSound: String, Sendable, CaseIterable {
    case female, male

    /// The other one.
    public var opposite: VoiceSound { self == .female ? .male : .female }

    /// What voice `id` sounds like, by what its provider knows of it (`nil`: not known, or another provider).
    public static func of(_ id: VoiceID) -> VoiceSound? {
        switch BuiltInProvider(rawValue: id.provider) {
        case .kokoro?: KokoroVoices.sounds(of: id.voice)
        case .piper?: PiperVoice.sounds(of: id.voice)
        case .flite?: FliteVoice.sounds(of: id.voice)
        case .espeak?: EspeakProvider.sounds(of: id.voice)
        default: nil
        }
    }

    /// What a speaker's name says they sound like: a word of it that names a woman's or a man's part in a family, or a
    /// title (`Mom`, `Grandma`, `Aunt Sue`, `Mrs Lee`, `Dad`, `Uncle Bob`, `Mr Lee`), else its first word as a first
    /// name given to girls or to boys (`Sarah`, `Marcus`; `femaleNames`, `maleNames`); `nil` when it says neither, or
    /// both.
    public init?(speakerName name: String) {
        let words = name.lowercased().split { !$0.isLetter }.map(String.init)
        let female = !Set(words).isDisjoint(with: Self.femaleWords)
        let male = !Set(words).isDisjoint(with: Self.maleWords)
        if female != male {
            self = female ? .female : .male
        } else if !female, let first = words.first, Self.femaleNames.contains(first) != Self.maleNames.contains(first) {
            self = Self.femaleNames.contains(first) ? .female : .male
        } else {
            return nil
        }
    }

    /// Words of a speaker's name that say she is a woman: family words and titles.
    static let femaleWords: Set<String> = [
        "mom", "mum", "mommy", "mummy", "mother", "mama", "mamma", "momma", "grandma", "grandmom", "grandmother", "granny",
        "gran", "nana", "nanna", "aunt", "auntie", "aunty", "sister", "sis", "wife", "daughter", "niece", "granddaughter",
        "stepmom", "stepmum", "godmother", "mrs", "ms", "miss", "madam",
    ]
    /// Words of a speaker's name that say he is a man: family words and titles.
    static let maleWords: Set<String> = [
        "dad", "daddy", "father", "papa", "grandpa", "granddad", "grandad", "grandfather", "gramps", "grampa", "uncle",
        "brother", "bro", "husband", "son", "nephew", "grandson", "stepdad", "godfather", "mr", "sir",
    ]
}

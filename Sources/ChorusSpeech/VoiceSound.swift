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
    /// title (`Mom`, `Grandma`, `Aunt Sue`, `Mrs Lee`, `Dad`, `Uncle Bob`, `Mr Lee`); `nil` when it has none or words of
    /// both.
    public init?(speakerName name: String) {
        let words = Set(name.lowercased().split { !$0.isLetter }.map(String.init))
        let female = !words.isDisjoint(with: Self.femaleWords)
        let male = !words.isDisjoint(with: Self.maleWords)
        guard female != male else { return nil }
        self = female ? .female : .male
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

/// Which offline voices speak the speakers a conversation gives no voice: the voice ids they are chosen from, in the
/// order speakers get them (the conversation engine's `VoiceAssignment` picks among them by what each sounds like).
///
/// ```swift
/// let voices = DefaultVoices.natural.voices(in: .standard())   // piper:en_US-joe-medium, kokoro:…, …, flite:…, espeak:…
/// ```
public enum DefaultVoices: String, Sendable, CaseIterable {
    /// The natural voices first — each natural provider's first choices (Kokoro's voices that read English,
    /// `KokoroVoices.defaultOrder`; Piper's, set-up's first), those whose own language is English before those that
    /// read it with an accent (set-up's Piper `joe` before Kokoro's Japanese pack), then their later ones (blends of
    /// Kokoro's voices, `KokoroVoices.defaultBlends`) — then Flite's and espeak-ng's, so that every speaker of a large
    /// group still sounds different. The default.
    case natural
    /// CMU Flite's natural-sounding voices first (slt, rms, awb, kal16; two slightly adjusted so that all twelve
    /// defaults differ measurably in pitch or rate), then espeak-ng's.
    case flite
    /// espeak-ng's voices only.
    case espeak

    /// The set by its name: `natural`, `flite` or `espeak` (and `piper`, the name `natural` had before Kokoro joined).
    public init?(name: String) {
        let name = name.lowercased()
        self.init(rawValue: name == "piper" ? DefaultVoices.natural.rawValue : name)
    }

    /// The providers whose voices make this set, in order: natural ones (`BuiltInProvider.isNatural`) first for
    /// `.natural`.
    private var providers: [BuiltInProvider] {
        switch self {
        case .natural: [.kokoro, .piper, .flite, .espeak]
        case .flite: [.flite, .espeak]
        case .espeak: [.espeak]
        }
    }

    /// The default voices `registry` can speak: the first choices of its natural providers in this set (those whose
    /// own language is English first, `readsEnglishNatively`), then their later ones, then the other providers' voices
    /// likewise. A registry with none of them gets espeak-ng's, so that a render names the provider it lacks.
    public func voices(in registry: VoiceRegistry) -> [VoiceID] {
        func voices(_ group: [BuiltInProvider]) -> [VoiceID] {
            let offered = group.compactMap { id in registry.providers[id.rawValue].map { (id.rawValue, $0.defaultVoices()) } }
            let first = offered.flatMap { id, voices in voices.first.map { VoiceID(provider: id, voice: $0) } }
            return first.filter(Self.readsEnglishNatively) + first.filter { !Self.readsEnglishNatively($0) }
                + offered.flatMap { id, voices in voices.later.map { VoiceID(provider: id, voice: $0) } }
        }
        let all = voices(providers.filter(\.isNatural)) + voices(providers.filter { !$0.isNatural })
        return all.isEmpty ? EspeakProvider.defaultVoices.map { VoiceID(provider: BuiltInProvider.espeak.rawValue, voice: $0) } : all
    }

    /// Whether a natural voice's own language is English (Chorus's texts are English unless a conversation says):
    /// Kokoro's American and British voices (by the name's first letter), Piper's `en_` voices. Whisper hears set-up's
    /// Piper `joe` word for word; Kokoro's Japanese voices read English with an accent (4–13 % of words misheard).
    static func readsEnglishNatively(_ voice: VoiceID) -> Bool {
        switch BuiltInProvider(rawValue: voice.provider) {
        case .kokoro?:
            KokoroVoices.kind(of: String(voice.voice.prefix { $0 != "?" && $0 != "+" && $0 != "(" })).language?.hasSuffix("English") == true
        case .piper?: voice.voice.hasPrefix("en_")
        default: false
        }
    }
}

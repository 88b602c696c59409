/// Which offline voices speak the speakers a conversation gives no voice: the voice ids they are chosen from, in the
/// order speakers get them (the conversation engine's `VoiceAssignment` picks among them by what each sounds like).
///
/// ```swift
/// let voices = DefaultVoices.natural.voices(in: .standard())   // kokoro:…, piper:en_US-joe-medium, …, flite:…, espeak:…
/// ```
public enum DefaultVoices: String, Sendable, CaseIterable {
    /// The natural voices first — each natural provider's first choices (Kokoro's voices that read English,
    /// `KokoroVoices.defaultOrder`; Piper's, set-up's first), then their later ones (blends of Kokoro's voices,
    /// `KokoroVoices.defaultBlends`) — then Flite's and espeak-ng's, so that every speaker of a large group still
    /// sounds different. The default.
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

    /// The default voices `registry` can speak: the first choices of its natural providers in this set, then their
    /// later ones, then the other providers' voices likewise. A registry with none of them gets espeak-ng's, so that
    /// a render names the provider it lacks.
    public func voices(in registry: VoiceRegistry) -> [VoiceID] {
        func voices(_ group: [BuiltInProvider]) -> [VoiceID] {
            let offered = group.compactMap { id in registry.providers[id.rawValue].map { (id.rawValue, $0.defaultVoices()) } }
            return offered.flatMap { id, voices in voices.first.map { VoiceID(provider: id, voice: $0) } }
                + offered.flatMap { id, voices in voices.later.map { VoiceID(provider: id, voice: $0) } }
        }
        let all = voices(providers.filter(\.isNatural)) + voices(providers.filter { !$0.isNatural })
        return all.isEmpty ? EspeakProvider.defaultVoices.map { VoiceID(provider: BuiltInProvider.espeak.rawValue, voice: $0) } : all
    }
}

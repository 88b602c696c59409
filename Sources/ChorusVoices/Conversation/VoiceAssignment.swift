public import Foundation

/// Which voice speaks each message that needs one.
///
/// A message's own `voice` wins over the conversation's `voices` map; speakers with neither get the
/// default voices in order of first appearance, skipping defaults the conversation already uses, so
/// different speakers sound different and re-renders sound the same.
enum VoiceAssignment {
    /// One entry for the intro (if any), each message and the outro (if any), in the order they are heard: its voice,
    /// or `nil` for a recorded clip.
    static func voices(for conversation: Conversation, defaults: [VoiceID]) -> [VoiceID?] {
        let all = [conversation.intro].compactMap { $0 } + conversation.messages + [conversation.outro].compactMap { $0 }
        var assigned: [String: VoiceID] = [:]
        var taken = Set(conversation.voices.values).union(all.compactMap(\.voice))
        var next = 0
        return all.map { message in
            guard message.needsSynthesis else { return nil }
            if let own = message.voice { return own }
            if let mapped = conversation.voices[message.speaker] { return mapped }
            if let existing = assigned[message.speaker] { return existing }
            var voice = defaults[next % defaults.count]
            var tries = 0
            while taken.contains(voice) && tries < defaults.count {
                next += 1
                tries += 1
                voice = defaults[next % defaults.count]
            }
            next += 1
            taken.insert(voice)
            assigned[message.speaker] = voice
            return voice
        }
    }
}

/// The offline engine whose voices speak speakers that have none.
public enum VoiceEngine: String, Sendable, CaseIterable {
    /// The natural voices first: the Piper voices installed in the voices folder (`PiperVoice.voicesFolder`, the one
    /// set-up installs first), then Flite's and espeak-ng's, so that every speaker of a large group still sounds
    /// different. The default.
    case piper
    /// CMU Flite's natural-sounding voices first (slt, rms, awb, kal16; two slightly adjusted so that all twelve
    /// defaults differ measurably in pitch or rate), then espeak-ng's.
    case flite
    /// espeak-ng's voices only (the defaults before Flite).
    case espeak

    /// The default voices, in the order speakers get them.
    public var defaultVoices: [VoiceID] { defaultVoices(piperVoices: PiperVoice.voicesFolder()) }

    /// The default voices `registry` can speak: its Piper provider's voices (none without one), then those of its
    /// other offline providers (all of them when it has none of these providers).
    public func defaultVoices(in registry: VoiceRegistry) -> [VoiceID] {
        let piper = (registry.providers[BuiltInProvider.piper.rawValue] as? PiperProvider)?.folder
        let voices = defaultVoices(piperVoices: piper ?? URL(fileURLWithPath: "/nonexistent-piper-voices", isDirectory: true))
        let available = voices.filter { registry.providers[$0.provider] != nil }
        return available.isEmpty ? voices : available  // none: the render names the missing provider
    }

    /// The default voices with the Piper voices of `folder` (those that open; set-up's default first).
    public func defaultVoices(piperVoices folder: URL) -> [VoiceID] {
        let espeak = EspeakProvider.defaultVoices.map { VoiceID(provider: "espeak", voice: $0) }
        let flite = FliteProvider.defaultVoices.map { VoiceID(provider: "flite", voice: $0) }
        switch self {
        case .piper:
            let names = PiperVoice.names(in: folder).filter { (try? PiperVoice(folder: folder.appendingPathComponent($0, isDirectory: true))) != nil }
            let ordered = names.filter { $0 == PiperVoice.defaultName } + names.filter { $0 != PiperVoice.defaultName }
            return ordered.map { VoiceID(provider: "piper", voice: $0) } + flite + espeak
        case .flite: return flite + espeak
        case .espeak: return espeak
        }
    }
}

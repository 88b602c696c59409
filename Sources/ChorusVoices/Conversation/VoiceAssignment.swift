/// Which voice speaks each message that needs one.
///
/// A message's own `voice` wins over the conversation's `voices` map; speakers with neither get the
/// default voices in order of first appearance, skipping defaults the conversation already uses, so
/// different speakers sound different and re-renders sound the same.
enum VoiceAssignment {
    /// One entry per message: its voice, or `nil` for a recorded clip.
    static func voices(for conversation: Conversation, defaults: [VoiceID]) -> [VoiceID?] {
        var assigned: [String: VoiceID] = [:]
        var taken = Set(conversation.voices.values).union(conversation.messages.compactMap(\.voice))
        var next = 0
        return conversation.messages.map { message in
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
    /// CMU Flite's natural-sounding voices first (slt, rms, awb, kal16; two slightly adjusted so that all twelve
    /// defaults differ measurably in pitch or rate), then espeak-ng's.
    case flite
    /// espeak-ng's voices only (the defaults before Flite).
    case espeak

    /// The default voices, in the order speakers get them.
    public var defaultVoices: [VoiceID] {
        let espeak = EspeakProvider.defaultVoices.map { VoiceID(provider: "espeak", voice: $0) }
        switch self {
        case .flite: return FliteProvider.defaultVoices.map { VoiceID(provider: "flite", voice: $0) } + espeak
        case .espeak: return espeak
        }
    }
}

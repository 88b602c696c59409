import ChorusSpeech
import Foundation

/// Which voice speaks each message that needs one.
///
/// A message's own `voice` wins over the conversation's `voices` map. Speakers with neither get default voices in
/// order of first appearance (a spoken intro's speaker first), each a voice the conversation does not name (in
/// `voices` or a message, with any settings) and no other speaker has while one is left, so different speakers sound
/// different and re-renders sound the same. What a default voice sounds like (`VoiceSound.of`) is
/// matched to the speaker:
/// - a speaker the conversation says sounds female or male (`"speakers": {"Mom": {"sounds": "female"}}`), or whose
///   name says so (`VoiceSound(speakerName:)`: Mom, Grandma, Dad, Uncle Bob), gets the first free default that sounds
///   so (a natural one while they last, then Flite's and espeak-ng's), else the first free one not known to sound
///   otherwise, else the first free one;
/// - the other speakers alternate, female first: the first such speaker gets the first free default that sounds
///   female, the second one that sounds male, and so on; where no natural voice of that sound is free but another
///   natural voice is, that one.
/// When every default is taken, speakers share them, cycling through those of the sound they want.
enum VoiceAssignment {
    /// One entry for the intro (if any), each message and the outro (if any), in the order they are heard: its voice,
    /// or `nil` for a recorded clip. `defaults` is never empty (`DefaultVoices.voices(in:)`).
    static func voices(for conversation: Conversation, defaults: [VoiceID]) -> [VoiceID?] {
        let all = [conversation.intro].compactMap { $0 } + conversation.messages + [conversation.outro].compactMap { $0 }
        let sounds = defaults.map(VoiceSound.of)
        let natural = defaults.map { BuiltInProvider(rawValue: $0.provider)?.isNatural == true }
        var assigned: [String: VoiceID] = [:]
        // A voice is taken with any settings (`kokoro:jf_alpha?speed=1.1` takes `kokoro:jf_alpha`).
        func plain(_ voice: VoiceID) -> String { "\(voice.provider):\(voice.voice.prefix { $0 != "?" })" }
        var taken = Set((Array(conversation.voices.values) + all.compactMap(\.voice)).map(plain))
        var unhinted = 0
        var shared: [VoiceSound: Int] = [:]
        func first(_ fits: (Int) -> Bool) -> Int? { defaults.indices.first { !taken.contains(plain(defaults[$0])) && fits($0) } }
        return all.map { message in
            guard message.needsSynthesis else { return nil }
            if let own = message.voice { return own }
            if let mapped = conversation.voices[message.speaker] { return mapped }
            if let existing = assigned[message.speaker] { return existing }
            let hinted = conversation.speakerSounds[message.speaker] ?? VoiceSound(speakerName: message.speaker)
            let wanted = hinted ?? (unhinted % 2 == 0 ? .female : .male)
            if hinted == nil { unhinted += 1 }
            var index = first { natural[$0] && sounds[$0] == wanted }
            if index == nil && hinted == nil { index = first { natural[$0] } }
            index = index ?? first { sounds[$0] == wanted } ?? first { sounds[$0] == nil } ?? first { _ in true }
            let voice: VoiceID
            if let index {
                voice = defaults[index]
            } else {
                let fitting = defaults.indices.filter { sounds[$0] == wanted }
                let cycle = fitting.isEmpty ? Array(defaults.indices) : fitting
                voice = defaults[cycle[shared[wanted, default: 0] % cycle.count]]
                shared[wanted, default: 0] += 1
            }
            taken.insert(plain(voice))
            assigned[message.speaker] = voice
            return voice
        }
    }
}

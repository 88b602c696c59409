public import Foundation

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
    /// or `nil` for a recorded clip. `defaults` is never empty (`VoiceEngine.defaultVoices`).
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

/// The offline engine whose voices speak speakers that have none.
public enum VoiceEngine: String, Sendable, CaseIterable {
    /// The natural voices first: Kokoro's voices that read English (`KokoroVoices.defaultOrder`), the Piper voices
    /// (set-up's first), blends of Kokoro's voices (`KokoroVoices.defaultBlends`), then Flite's and espeak-ng's, so
    /// that every speaker of a large group still sounds different. The default.
    case piper
    /// CMU Flite's natural-sounding voices first (slt, rms, awb, kal16; two slightly adjusted so that all twelve
    /// defaults differ measurably in pitch or rate), then espeak-ng's.
    case flite
    /// espeak-ng's voices only (the defaults before Flite).
    case espeak

    /// The default voices, in the order speakers get them (set-up's Piper and Kokoro folders).
    public var defaultVoices: [VoiceID] { defaultVoices(piperVoices: PiperVoice.voicesFolder(), kokoro: KokoroModel.folder()) }

    /// The default voices `registry` can speak: its Piper and Kokoro providers' voices (none without them), then
    /// those of its other offline providers (all of them when it has none of these providers).
    public func defaultVoices(in registry: VoiceRegistry) -> [VoiceID] {
        let none = URL(fileURLWithPath: "/nonexistent-voices", isDirectory: true)
        let piper = (registry.providers[BuiltInProvider.piper.rawValue] as? PiperProvider)?.folder
        let kokoro = (registry.providers[BuiltInProvider.kokoro.rawValue] as? KokoroProvider)?.folder
        let voices = defaultVoices(piperVoices: piper ?? none, kokoro: kokoro)
        let available = voices.filter { registry.providers[$0.provider] != nil }
        return available.isEmpty ? voices : available  // none: the render names the missing provider
    }

    /// The default voices with the Piper voices of `folder` (those that open; set-up's default first) and the voices of
    /// the Kokoro model in `kokoro` (when it opens).
    public func defaultVoices(piperVoices folder: URL, kokoro: URL? = nil) -> [VoiceID] {
        let espeak = EspeakProvider.defaultVoices.map { VoiceID(provider: "espeak", voice: $0) }
        let flite = FliteProvider.defaultVoices.map { VoiceID(provider: "flite", voice: $0) }
        switch self {
        case .piper:
            let names = PiperVoice.names(in: folder).filter { (try? PiperVoice(folder: folder.appendingPathComponent($0, isDirectory: true))) != nil }
            let piper = (names.filter { $0 == PiperVoice.defaultName } + names.filter { $0 != PiperVoice.defaultName })
                .map { VoiceID(provider: "piper", voice: $0) }
            var kokoroVoices: [String] = []
            if let kokoro, let model = try? KokoroModel(folder: kokoro) {
                kokoroVoices = KokoroVoices.defaultOrder(of: Array(KokoroVoices.of(folder: model.voicesFolder).styles.keys))
            }
            func spoken(_ names: [String]) -> [VoiceID] { names.map { VoiceID(provider: "kokoro", voice: $0) } }
            return spoken(kokoroVoices) + piper + spoken(KokoroVoices.defaultBlends(of: kokoroVoices)) + flite + espeak
        case .flite: return flite + espeak
        case .espeak: return espeak
        }
    }
}

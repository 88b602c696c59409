/// Which of a render's messages are heard together, one group at a time: recordings, and the messages of voices that
/// give no word times (OpenAI's), whose text is aligned to what is heard. A word can depend on its neighbours in a
/// Whisper window, so the groups are fixed by the conversation's order, never by when each message is ready: walking
/// the messages in order, each stretch of consecutive such messages that must be heard (not in the transcript cache)
/// is a group of at most `limitSamples` of speech laid end to end with `gapSamples` between (one that is longer alone
/// is a group of its own) and at most `limitCount` messages, handed over when the next member would not fit, at the
/// message of a voice that times its words (so recordings are heard while such voices are waited for) or at the end. The walk stops at the first
/// member whose part is not known yet; what it has gathered waits for it.
struct ListeningGroups<Speech> {
    /// Whether each message ends a group instead of joining one: a voice that times its own words speaks it.
    private let voiced: [Bool]
    private let limitSamples: Int
    private let gapSamples: Int
    private let limitCount: Int
    /// The next message whose part is not decided; members to hear and members passed, ahead of it.
    private var next = 0
    private var toHear: [Int: (speech: Speech, samples: Int)] = [:]
    private var passed = Set<Int>()
    private var gathering: [(index: Int, speech: Speech)] = []
    private var gatheredSamples = 0

    /// - Parameters:
    ///   - voiced: For each message, whether a voice that times its own words speaks it.
    ///   - limitSamples: Speech a group holds at most, with the gaps between its members.
    ///   - gapSamples: The gap between two members' speech as they are heard (Whisper's packed windows).
    ///   - limitCount: Messages a group holds at most.
    init(voiced: [Bool], limitSamples: Int, gapSamples: Int = 0, limitCount: Int) {
        self.voiced = voiced
        self.limitSamples = limitSamples
        self.gapSamples = max(0, gapSamples)
        self.limitCount = max(1, limitCount)
    }

    /// Whether message `index` is heard in a group when it must be heard (it does not end groups).
    func joins(_ index: Int) -> Bool { index < voiced.count && !voiced[index] }

    /// Message `index` (a member) must be heard: `speech`, `samples` long.
    mutating func hear(_ index: Int, _ speech: Speech, samples: Int) {
        guard index >= next, index < voiced.count, !voiced[index] else { return }
        toHear[index] = (speech, samples)
    }

    /// Message `index` (a member) need not be heard (its words are known, or it has no speech). A member already in a
    /// group is not affected, nor is a message that ends groups (the walk passes those without being told).
    mutating func pass(_ index: Int) {
        guard index >= next, index < voiced.count, !voiced[index], toHear[index] == nil else { return }
        passed.insert(index)
    }

    /// The groups complete now, in order (each in the conversation's order).
    mutating func ready() -> [[(index: Int, speech: Speech)]] {
        var groups: [[(index: Int, speech: Speech)]] = []
        func handOver() {
            if !gathering.isEmpty { groups.append(gathering) }
            gathering = []
            gatheredSamples = 0
        }
        while next < voiced.count {
            if voiced[next] {
                handOver()
            } else if passed.remove(next) == nil {
                guard let recording = toHear.removeValue(forKey: next) else { return groups }
                if !gathering.isEmpty, gatheredSamples + gapSamples + recording.samples > limitSamples { handOver() }
                gatheredSamples += (gathering.isEmpty ? 0 : gapSamples) + recording.samples
                gathering.append((next, recording.speech))
                if gatheredSamples >= limitSamples || gathering.count >= limitCount { handOver() }
            }
            next += 1
        }
        handOver()
        return groups
    }
}

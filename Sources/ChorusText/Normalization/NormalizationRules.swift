/// A language's rules, over the words of one text: what each word (or run of words, each replaced on its own) is said as.
protocol NormalizationRules: SendableMetatype {
    init(scalars: [Unicode.Scalar], words: [WordAligner.TextWord])
    /// The words to say otherwise: the word's index, its range in the text (Unicode scalars), what is said.
    func replacements() -> [(word: Int, range: Range<Int>, spoken: String)]
}

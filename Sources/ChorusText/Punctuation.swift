/// The punctuation that ends clauses and sentences, for everything in Chorus that cuts text or phonemes at it:
/// espeak-ng's clauses (`EspeakEngine.clauses(of:)`), a stream's first clause (`TextChunker.firstClause`), long text
/// cut into sentences (`TextChunker.chunks`), and the pauses heard between words (`SpokenPhonemes.words`).
package enum Punctuation {
    /// Marks that end a clause when whitespace or the end of the text follows them; Piper's and Kokoro's phonemes
    /// keep them.
    package static let clauseEnds: Set<Character> = [".", "?", "!", ",", ":", ";", "…"]
    /// The clause ends that end a sentence.
    package static let sentenceEnds: Set<Character> = [".", "?", "!", "…"]
    /// Closing quotes and brackets: they belong to the mark before them (`"Stop!"` ends at its quote).
    package static let closers: Set<Character> = ["\"", "'", ")", "]", "}", "”", "’", "»"]
}

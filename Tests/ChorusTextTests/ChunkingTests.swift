import Testing

@testable import ChorusText

@Suite("Text chunking")
struct ChunkingTests {
    @Test("chunks stay within the limit and break at sentences")
    func sentences() {
        let text = "First sentence here. Second one is a bit longer! Third? Fourth sentence ends it."
        let chunks = TextChunker.chunks(text, limit: 40)
        #expect(chunks == ["First sentence here.", "Second one is a bit longer! Third?", "Fourth sentence ends it."])
        #expect(chunks.joined(separator: " ") == text)
        // A closing quote or bracket stays with the sentence it closes (the closers espeak-ng's clauses keep too).
        let quoted = "She said «Stop.» He stopped. {Done!} Next one here."
        #expect(TextChunker.chunks(quoted, limit: 20) == ["She said «Stop.»", "He stopped. {Done!}", "Next one here."])
    }

    @Test("a sentence over the limit splits between words; a huge word is cut")
    func words() {
        let chunks = TextChunker.chunks("alpha beta gamma delta epsilon zeta eta theta", limit: 12)
        #expect(chunks.allSatisfy { $0.count <= 12 })
        #expect(chunks.joined(separator: " ") == "alpha beta gamma delta epsilon zeta eta theta")
        #expect(TextChunker.chunks(String(repeating: "x", count: 25), limit: 10) == ["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"])
        #expect(TextChunker.chunks("short", limit: 100) == ["short"])
    }

    @Test("the opening clause: up to the first clause or sentence end, never inside a number, an abbreviation or markup")
    func firstClause() throws {
        func cut(_ text: String) -> [String]? {
            TextChunker.firstClause(text).map { [$0.first, $0.rest, $0.endsSentence ? "sentence" : "clause"] }
        }
        #expect(cut("Running late, practice moved to four thirty.") == ["Running late,", "practice moved to four thirty.", "clause"])
        #expect(cut("  Quick update:  the dentist called.\nBye. ") == ["Quick update:", "the dentist called.\nBye.", "clause"])
        #expect(cut("Good news! Grandma lands at noon.") == ["Good news!", "Grandma lands at noon.", "sentence"])
        #expect(cut("Wait… what?") == ["Wait…", "what?", "sentence"])
        // Numbers, times and verses keep their marks; a capitalized short word before a period may be a title.
        #expect(cut("It costs 1,000 dollars at 4:30, sadly.") == ["It costs 1,000 dollars at 4:30,", "sadly.", "clause"])
        #expect(cut("Dr. Smith called. Call back.") == ["Dr. Smith called.", "Call back.", "sentence"])
        #expect(cut("Mrs. Jones, hi there.") == ["Mrs. Jones,", "hi there.", "clause"])
        #expect(cut("Meet at 4 p.m. tomorrow, then home.") == ["Meet at 4 p.m. tomorrow,", "then home.", "clause"])
        #expect(cut("Cats vs. dogs, round two.") == ["Cats vs. dogs,", "round two.", "clause"])
        #expect(cut("\"Mr. Smith called. Call back.\"") == ["\"Mr. Smith called.", "Call back.\"", "sentence"])
        #expect(cut("(Dr. Lee) is here. Come in.") == ["(Dr. Lee) is here.", "Come in.", "sentence"])
        // Nothing to cut: one clause, nothing after the mark, an opening over a dozen words, markup, no words first.
        #expect(cut("Just one sentence here.") == nil)
        #expect(cut("Trailing marks only, ") == nil)
        #expect(cut("Hello, !!!") == nil)
        #expect(cut("One two three four five six seven eight nine ten eleven twelve thirteen, then more.") == nil)
        #expect(cut("Well, <break time=\"1s\"/> maybe.") == nil)
        #expect(cut("And the winner is… [pause:1.5s] Grandma!") == nil)
        #expect(cut("Say [[ʃɪˈvɔːn]], please.") == nil)
        #expect(cut("... , then words.") == nil)
        #expect(cut("") == nil)
        let twelve = "One two three four five six seven eight nine ten eleven twelve, then more."
        #expect(cut(twelve)?.first == "One two three four five six seven eight nine ten eleven twelve,")
    }
}

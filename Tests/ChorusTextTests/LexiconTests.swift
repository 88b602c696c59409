import Testing

@testable import ChorusText
@testable import ChorusWire

/// The text alone; the providers' phoneme markup is tested in ChorusSpeechTests, lexicons in conversations and
/// renders in ChorusConversationTests.
@Suite("Lexicons: aliases spoken for written words")
struct LexiconTests {
    @Test("whole words, case-insensitive unless the entry says; punctuation kept; the written words back from the spoken ones")
    func spokenAndWritten() throws {
        let lexicon = try Lexicon(
            json: [
                "Nguyen": .string("win"), "Siobhan": .object(["alias": .string("shiv awn")]),
                "Reading": .object(["alias": .string("Redding"), "case_sensitive": .bool(true)]),
            ], field: "lexicon")
        let form = lexicon.spoken("Ask NGUYEN, Siobhan and me about Reading (not reading) or Nguyens.")
        #expect(form.spoken == "Ask win, shiv awn and me about Redding (not reading) or Nguyens.")
        // Words timed on the spoken text, one per spoken word: shown as written, a two-word alias as one word.
        let spokenWords = WordAligner.words(in: form.spoken)
        let timed = spokenWords.indices.map { WordTiming(word: spokenWords[$0].word, start: Double($0), end: Double($0) + 0.5) }
        let written = form.writtenWords(timed)
        #expect(written.map(\.word) == ["Ask", "NGUYEN", "Siobhan", "and", "me", "about", "Reading", "not", "reading", "or", "Nguyens"])
        #expect(written[2].start == 2 && written[2].end == 3.5, "Siobhan spans shiv awn")
        #expect(written[3].start == 4)
        // Timings that do not match the spoken words one for one are left as they are.
        #expect(form.writtenWords(Array(timed.dropLast())) == Array(timed.dropLast()))
    }

    @Test("IPA: checked, and written for each engine that takes phonemes (espeak-ng's mnemonics; Piper's espeak-style IPA)")
    func ipaForms() throws {
        #expect(try IPA.validated(" ʃɪˈvɔːn ", field: "x") == "ʃɪˈvɔːn")
        #expect(IPA.espeakMnemonics("ʃɪˈvɔːn") == "SI'vO:n")
        #expect(IPA.espeakMnemonics("ˈtʃɜːtʃ") == "'tS3:tS")
        #expect(IPA.espeakMnemonics("ˈnɛbjʊkədˌnɛzəɹ") == "'nEbjUk@d,nEz@r")
        #expect(IPA.espeakMnemonics("ˈsɪəʃə") == "'si@S@")
        #expect(IPA.espeakMnemonics("t͡ʃaɪ") == "tSaI")
        // Piper voices were trained on espeak-ng's IPA: stress before the vowel, ɡ and ɹ; symbols the voice lacks left out.
        let known = Set("ʃɪvɔːnˈˌɡɹæ".decomposedStringWithCanonicalMapping.unicodeScalars)
        #expect(IPA.piperPhonemes("ʃɪˈvɔːn", english: true, known: known) == "ʃɪvˈɔːn")
        #expect(IPA.piperPhonemes("ˈɡræn", english: true, known: known) == "ɡɹˈæn")
        #expect(IPA.piperPhonemes("ˈgræxn", english: true, known: known) == "ɡɹˈæn")
        #expect(throws: TextError.self) { try IPA.validated("ʃɪ1vɔːn", field: "x") }
        #expect(throws: TextError.self) { try IPA.validated("ˈˌ", field: "x") }
        #expect(throws: TextError.self) { try IPA.validated(String(repeating: "a", count: 201), field: "x") }
    }
}

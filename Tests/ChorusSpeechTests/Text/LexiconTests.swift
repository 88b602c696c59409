import Testing

@testable import ChorusSpeech
@testable import ChorusText
@testable import ChorusWire

/// The providers' phoneme markup and dictionaries; the text alone is tested in ChorusTextTests, lexicons in
/// conversations and renders in ChorusConversationTests.
@Suite("Lexicons: aliases spoken for written words")
struct LexiconTests {
    @Test("a provider that takes phonemes is sent the IPA in its markup, others the alias or the written word; no [[ but the markup's reaches it")
    func ipaMarkup() throws {
        let lexicon = try Lexicon(
            json: [
                "Siobhan": .object(["ipa": .string("ʃɪˈvɔːn"), "alias": .string("shiv awn")]),
                "Saoirse": .object(["ipa": .string("ˈsɪəʃə")]), "foo": .string("[h@'l@U]]"),
                "R2D2": .object(["ipa": .string("ˈɑːɹtuːdiːtuː"), "alias": .string("artoo detoo")]),
            ], field: "lexicon")
        let espeak = try #require(EspeakProvider().phonemeMarkup(voice: "en-us"))
        let marked = lexicon.spoken("Ask Siobhan and Saoirse [[now]].", phonemeMarkup: espeak)
        #expect(marked.spoken == "Ask [[SI'vO:n]] and [['si@S@]] [ [now]].")
        let spokenWords = WordAligner.words(in: marked.spoken)
        let timed = spokenWords.indices.map { WordTiming(word: spokenWords[$0].word, start: Double($0), end: Double($0) + 0.5) }
        #expect(marked.writtenWords(timed).map(\.word) == ["Ask", "Siobhan", "and", "Saoirse", "now"])
        #expect(lexicon.spoken("Ask Siobhan and Saoirse [[now]].").spoken == "Ask shiv awn and Saoirse [[now]].")
        // Nothing else makes "[[": a text's "[" before an alias or before markup, runs of "[", an SSML reading.
        for text in [
            "[foo now", "[[[x]]", "x [Siobhan]",
            "<speak>x <sub alias=\"[[[h@'l@U]]\">y</sub> <sub alias=\"a[\">b</sub><sub alias=\"[c]]\">d</sub></speak>",
        ] {
            let runs: [SSML.Run] =
                SSML.isSSML(text)
                ? try SSML.parts(of: text, field: "text").flatMap { part -> [SSML.Run] in if case .text(let runs, _) = part { runs } else { [] } }
                : [SSML.Run(written: text, spoken: nil)]
            let form = TextNormalizer.spokenForm(of: runs, lexicon: lexicon, normalize: true, phonemeMarkup: espeak)
            let markups = IPA.markupRanges(in: form.spoken)
            let scalars = Array(form.spoken.unicodeScalars)
            #expect(
                markups.allSatisfy { range in String(String.UnicodeScalarView(scalars[range])).hasPrefix("[[SI'vO:n]]") }, "\(text) → \(form.spoken)")
        }
        // "[[" inside a word (found by the fuzzer): said apart, the word shown as written.
        let inside = TextNormalizer.spokenForm(of: "It is i[[x:1.5s] now.", lexicon: nil, normalize: true, phonemeMarkup: espeak)
        #expect(inside.spoken == "It is i[ [x:1.5s] now.")
        let said = WordAligner.words(in: inside.spoken)
        #expect(
            inside.writtenWords(said.indices.map { WordTiming(word: said[$0].word, start: Double($0), end: Double($0) + 1) }).map(\.word)
                == ["It", "is", "i[[x:1.5s", "now"])
        // espeak-ng's mnemonics are English's: another language's voice says the alias; Flite takes none inline.
        #expect(EspeakProvider().phonemeMarkup(voice: "de") == nil && FliteProvider().phonemeMarkup(voice: "slt") == nil)
        // Flite takes them into its lexicon: CMU phones with stress (no secondary stress: Flite's lexicon has none).
        #expect(IPA.cmuPhones("ʃɪˈvɔːn") == ["sh", "ih0", "v", "ao1", "n"])
        #expect(IPA.cmuPhones("ˈtʃɜːtʃ") == ["ch", "er1", "ch"])
        #expect(IPA.cmuPhones("ˌnɛbjʊkədˈnɛzəɹ") == ["n", "eh0", "b", "y", "uh0", "k", "ah0", "d", "n", "eh1", "z", "ah0", "r"])
        #expect(
            FliteProvider.lexiconEntries([Pronunciation(word: "Siobhan", ipa: "ʃɪˈvɔːn", caseSensitive: true)])
                == ["Siobhan : sh ih0 v ao1 n", "siobhan : sh ih0 v ao1 n"])
        let flite = try #require(FliteProvider().pronunciationDictionary(settings: [:]))
        let dictionary = TextNormalizer.spokenForm(of: "Ask Siobhan, Saoirse and R2D2.", lexicon: lexicon, normalize: false, dictionary: flite)
        // R2D2 is no word Flite's lexicon can hold: its alias is said.
        #expect(dictionary.spoken == "Ask Siobhan, Saoirse and artoo detoo." && dictionary.pronunciations.map(\.word) == ["Siobhan", "Saoirse"])
        #expect(dictionary.pronunciations(in: "and Saoirse.").map(\.word) == ["Saoirse"])
        // Piper: a syllable break is no full stop.
        #expect(IPA.piperPhonemes("ʃɪ.ˈvɔːn", english: true, known: []) == "ʃɪvˈɔːn")
    }
}

import ChorusText
import ChorusWire
package import Foundation

/// The fuzz targets of the text layer, apart so that they build and run with ChorusText alone (no audio, no ONNX
/// Runtime, no voice): `ChorusFuzzing`'s `ssml` target is this one, and ChorusText's tests replay its corpus.
package enum TextFuzzTarget {
    /// Text as SSML (`<speak>…`): parsed, or refused with a `TextError`; what it shows is what it writes, and every
    /// written word comes back from words timed on what is said.
    package static func ssml(_ bytes: Data) {
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            let parts = try SSML.parts(of: text, field: "text")
            check(parts.count <= 2 * SSML.maximumElements + 2, "more parts than elements allow")
            for case .text(let runs, let rate) in parts {
                check(rate.map { (0.5...2).contains($0) } ?? true, "a rate out of range")
                let written = runs.map(\.written).joined()
                let form = TextNormalizer.spokenForm(of: runs, lexicon: nil, normalize: true)
                let said = WordAligner.words(in: form.spoken)
                let timed = said.indices.map { WordTiming(word: said[$0].word, start: Double($0), end: Double($0) + 1) }
                let back = form.writtenWords(timed).map(\.word)
                check(back.count <= WordAligner.words(in: written).count + said.count, "more words back than written and said")
                // Pronunciations: as espeak-ng's markup, one per IPA run and none injected by the text itself; as a dictionary.
                let marked = TextNormalizer.spokenForm(
                    of: runs, lexicon: nil, normalize: true,
                    phonemeMarkup: { ipa in
                        let mnemonics = IPA.espeakMnemonics(ipa)
                        return mnemonics.isEmpty ? nil : IPA.open + mnemonics + IPA.close
                    })
                let expected = runs.filter { run in
                    run.ipa.map { ipa in WordAligner.words(in: IPA.open + IPA.espeakMnemonics(ipa) + IPA.close).count == 1 } ?? false
                }.count
                let ranges = IPA.markupRanges(in: marked.spoken)
                check(ranges.count == expected, "phoneme markup: \(expected) expected in \(marked.spoken.prefix(200))")
                let scalars = Array(marked.spoken.unicodeScalars)
                check(
                    ranges.allSatisfy { range in !scalars[(range.lowerBound + 2)..<(range.upperBound - 2)].contains { $0 == "[" || $0 == "]" } },
                    "a bracket inside phoneme markup: \(marked.spoken.prefix(200))")
                for case let ipa? in runs.map(\.ipa) {
                    check(!IPA.cmuPhones(ipa).contains { $0.isEmpty || $0.contains(" ") }, "a CMU phone that is empty or has a space")
                    check(!IPA.piperPhonemes(ipa, english: true, known: []).contains(" "), "a space in Piper's phonemes")
                }
                let dictionary = TextNormalizer.spokenForm(of: runs, lexicon: nil, normalize: true, dictionary: { _ in true })
                check(dictionary.pronunciations.allSatisfy { WordAligner.words(in: $0.word).count == 1 }, "a pronunciation that is not one word")
            }
            check(!SSML.visible(text).contains("<speak"), "markup in the visible text")
        } catch let error as TextError {
            check(error.code == .invalid && error.description.contains("SSML"), "SSML error \(error)")
        } catch {
            preconditionFailure("SSML.parts threw \(type(of: error)), not TextError: \(error)")
        }
    }

    /// Stops the process (a crash to libFuzzer) unless `condition` holds.
    package static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { preconditionFailure("fuzz invariant: \(message())") }
    }
}

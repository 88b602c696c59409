import ChorusAudio
import ChorusText
import ChorusWire
import Foundation

/// One sentence spoken by a voice that times its phonemes (Piper, Kokoro): its samples at the voice's rate, and when
/// each of its phonemes is heard.
struct SpokenPhonemes: Sendable {
    var samples: [Float]
    /// Each phoneme of the sentence the voice knows, in order, with the samples from its start to the next one's
    /// (the pad Piper puts after each phoneme belongs to it).
    var phonemes: [(scalar: Unicode.Scalar, samples: Range<Int>)]
    /// Where the last phoneme ends (the end marker's frames, silence, follow).
    var speechEnd: Int
}

extension SpokenPhonemes {
    /// Every word of `text` timed from its phonemes' times. The phoneme words heard (runs of phonemes between spaces
    /// and punctuation, in `spoken`, one sentence after another) are matched to the clauses' phoneme words; a clause
    /// whose text has as many words gives each word its phoneme word's start; otherwise each text word's phonemes read
    /// alone say how many phoneme words it takes; a clause that matches neither way times its first word and shares
    /// the rest of its time by length (`WordAligner`). Words end at the next word or where punctuation or a
    /// sentence's end is heard.
    static func words(
        of text: String, clauses: [EspeakEngine.PhonemeClause], spoken: [SpokenPhonemes],
        known: Set<Unicode.Scalar>, rate: Int
    ) -> [WordTiming] {
        // The phoneme words heard, as their first samples, and the samples where punctuation or a sentence's end is heard.
        var heard: [Int] = []
        var pauses: [Int] = []
        var offset = 0
        for part in spoken {
            var inWord = false
            for phoneme in part.phonemes {
                if phoneme.scalar == " " {
                    inWord = false
                } else if Punctuation.clauseEnds.contains(Character(phoneme.scalar)) {
                    inWord = false
                    pauses.append(offset + phoneme.samples.lowerBound)
                } else if !inWord {
                    inWord = true
                    heard.append(offset + phoneme.samples.lowerBound)
                }
            }
            pauses.append(offset + part.speechEnd)
            offset += part.samples.count
        }
        let duration = Double(offset) / Double(rate)
        func seconds(_ sample: Int) -> Double { Double(sample) / Double(rate) }
        /// How many phoneme words the voice hears in `phonemes` (words of phonemes it does not know are not heard).
        func phonemeWords(_ phonemes: String) -> Int {
            phonemes.split(separator: " ").filter { word in
                word.unicodeScalars.contains { known.contains($0) && !Punctuation.clauseEnds.contains(Character($0)) }
            }.count
        }

        let textWords = WordAligner.words(in: text)
        var anchors: [(offset: Int, time: Double)] = []
        let clauseWords = clauses.map { WordAligner.words(in: $0.text).count }
        let clausePhonemeWords = clauses.map { phonemeWords($0.phonemes) }
        if clauseWords.reduce(0, +) == textWords.count, clausePhonemeWords.reduce(0, +) == heard.count {
            var word = 0
            var phoneme = 0
            for (index, clause) in clauses.enumerated() {
                let words = textWords[word..<(word + clauseWords[index])]
                let starts = heard[phoneme..<(phoneme + clausePhonemeWords[index])]
                if words.count == starts.count {
                    for (textWord, start) in zip(words, starts) { anchors.append((textWord.range.lowerBound, seconds(start))) }
                } else if let alone = clause.wordPhonemes?.map(phonemeWords), alone.count == words.count,
                    alone.reduce(0, +) == starts.count
                {
                    var next = starts.startIndex
                    for (textWord, taken) in zip(words, alone) {
                        if taken > 0 { anchors.append((textWord.range.lowerBound, seconds(starts[next]))) }
                        next += taken
                    }
                } else if let first = words.first, let start = starts.first {
                    anchors.append((first.range.lowerBound, seconds(start)))
                }
                word += words.count
                phoneme += starts.count
            }
        } else if let first = textWords.first, let start = heard.first {
            anchors.append((first.range.lowerBound, seconds(start)))
        }
        return WordAligner.align(text, anchors: anchors, pauses: pauses.map(seconds), duration: duration)
    }
}

extension SpokenPhonemes {
    /// The note of a voice given phonemes it has no symbol for (`dropped`, left out of what it was given, in order),
    /// for the render's warnings: `kokoro:jf_alpha has no symbol for 3 of the text's phonemes (ɬ, ʕ); they were left
    /// out`. None when nothing was left out.
    static func droppedNote(_ dropped: [Unicode.Scalar], voice: String) -> [String] {
        guard !dropped.isEmpty else { return [] }
        var distinct: [Unicode.Scalar] = []
        for symbol in dropped where !distinct.contains(symbol) { distinct.append(symbol) }
        let listed = distinct.prefix(8).map { String($0) }.joined(separator: ", ") + (distinct.count > 8 ? ", …" : "")
        return ["\(voice) has no symbol for \(dropped.count) of the text's phonemes (\(listed)); they were left out"]
    }
}

import Testing

@testable import ChorusText
@testable import ChorusWire

/// The text alone; the rules per provider and in renders are tested in ChorusConversationTests.
@Suite("Text read as people read it: references, times, money, numbers, dates, phones, abbreviations")
struct TextNormalizerTests {
    static func spoken(_ text: String) -> String { TextNormalizer.spokenForm(of: text, lexicon: nil, normalize: true).spoken }

    @Test(
        "each kind of token, spoken",
        arguments: [
            ("John 3:16", "John chapter three, verse sixteen"),
            ("Ps 23:1-3.", "Psalm twenty-three, verses one to three."),
            ("1 Cor. 13:4–7", "First Corinthians chapter thirteen, verses four to seven"),
            ("Rev 22:21", "Revelation chapter twenty-two, verse twenty-one"),
            ("at 4:30", "at four thirty"), ("at 7:15 pm", "at seven fifteen p m"), ("7:00", "seven o'clock"), ("9:05am", "nine oh five a m"),
            ("$12.50", "twelve dollars and fifty cents"), ("$1", "one dollar"), ("$0.99", "ninety-nine cents"), ("£3", "three pounds"),
            ("50% off", "fifty percent off"), ("2.5%", "two point five percent"),
            ("the 22nd", "the twenty-second"), ("1st", "first"), ("3.14", "three point one four"),
            ("1,250 people", "one thousand two hundred fifty people"),
            ("in 1999", "in nineteen ninety-nine"), ("2026", "twenty twenty-six"), ("2005", "two thousand five"), ("42", "forty-two"),
            ("on 3/14", "on March fourteenth"), ("12/25/2026", "December twenty-fifth, twenty twenty-six"), ("Jan 5", "January fifth"),
            ("call 555-123-4567", "call five five five, one two three, four five six seven"),
            ("(555) 123-4567", "(five five five) one two three, four five six seven"),
            ("Dr. Smith", "Doctor Smith"), ("Elm Dr.", "Elm Drive"), ("St. John", "Saint John"), ("Main St.", "Main Street"),
            ("Mrs. Lee", "Missus Lee"),
            ("see you Sat. at 5", "see you Saturday at five"), ("on Mon", "on Monday"), ("I sat down", "I sat down"),
            ("Great 👍🏽 job 🎉!", "Great job !"), ("great👍job", "great👍job"),
            ("a 5km run", "a five kilometers run"), ("lift 10 kg", "lift ten kilograms"), ("1 mi away", "one mile away"),
            ("it is 72°F", "it is seventy-two degrees Fahrenheit"),
            ("it is 72° out", "it is seventy-two degrees out"), ("come in 5", "come in five"),
            ("mail ana@example.com", "mail ana at example dot com"),
            ("see https://chorus.dev/docs/start.", "see chorus dot dev slash docs slash start."),
            ("www.stmarys.church", "stmarys dot church"),
        ])
    func kinds(text: String, expected: String) {
        #expect(Self.spoken(text).split(separator: " ").joined(separator: " ") == expected, "\(text)")
    }

    @Test("emoji said by name when asked (a family one name each, a skin tone left out, a flag), never a word on screen; dropped by default")
    func emojiNamed() {
        let named = TextReading(emoji: .name)
        func spoken(_ text: String, _ reading: TextReading) -> SpokenForm {
            TextNormalizer.spokenForm(of: text, lexicon: nil, normalize: true, reading: reading)
        }
        let cases: [(String, String)] = [
            ("Great 👍🏽 job 🎉!", "Great thumbs up job party popper !"),
            ("Love you ❤️", "Love you red heart"),
            ("Home 👨‍👩‍👧 now", "Home man woman girl now"),
            ("Go 🇺🇸", "Go flag"),
            ("Ha 😂😂", "Ha face with tears of joy, face with tears of joy"),
            ("great👍job", "great👍job"),
        ]
        for (text, expected) in cases {
            #expect(spoken(text, named).spoken.split(separator: " ").joined(separator: " ") == expected, "\(text)")
        }
        #expect(spoken("Love you ❤️", TextReading()).spoken.split(separator: " ").joined(separator: " ") == "Love you")
        #expect(TextNormalizer.spokenForm(of: "Love you ❤️", lexicon: nil, normalize: false, reading: named).spoken == "Love you ❤️")
        // The names are said, the timeline shows the written words only.
        let form = spoken("Great 👍 job 🎉!", named)
        let spokenWords = WordAligner.words(in: form.spoken)
        let timed = spokenWords.indices.map { WordTiming(word: spokenWords[$0].word, start: Double($0), end: Double($0) + 1) }
        #expect(form.writtenWords(timed).map(\.word) == ["Great", "job"])
        #expect(form.writtenWords(timed).map(\.start) == [0, 3])
    }

    @Test("the timeline keeps the written tokens: \"3:16\" is one word spanning what was said for it")
    func writtenTokensKept() {
        let form = TextNormalizer.spokenForm(of: "Read 1 Cor 13:4–7 at 7:15 pm, $12.50.", lexicon: nil, normalize: true)
        let spokenWords = WordAligner.words(in: form.spoken)
        let timed = spokenWords.indices.map { WordTiming(word: spokenWords[$0].word, start: Double($0), end: Double($0) + 1) }
        let written = form.writtenWords(timed)
        #expect(written.map(\.word) == WordAligner.words(in: "Read 1 Cor 13:4–7 at 7:15 pm, $12.50.").map(\.word))
        // "13:4–7" → "chapter thirteen, verses four to seven": six spoken words, one written.
        let reference = written[3]
        #expect(reference.word == "13:4–7" && reference.end - reference.start == 6, "\(reference)")
    }
}

/// English number words: cardinals, ordinals, years, digits one by one.
enum SpokenNumbers {
    private static let ones = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    ]
    private static let tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    private static let scales: [(Int, String)] = [
        (1_000_000_000_000, "trillion"), (1_000_000_000, "billion"), (1_000_000, "million"), (1_000, "thousand"),
    ]

    /// "one thousand two hundred thirty-four"; negative numbers "minus …".
    static func cardinal(_ number: Int) -> String {
        if number < 0 { return "minus " + cardinal(-number) }
        if number < 20 { return ones[number] }
        if number < 100 { return tens[number / 10] + (number % 10 == 0 ? "" : "-" + ones[number % 10]) }
        if number < 1_000 { return ones[number / 100] + " hundred" + (number % 100 == 0 ? "" : " " + cardinal(number % 100)) }
        for (scale, name) in scales where number >= scale {
            return cardinal(number / scale) + " " + name + (number % scale == 0 ? "" : " " + cardinal(number % scale))
        }
        return String(number)
    }

    /// "first", "twenty-second", "one hundredth".
    static func ordinal(_ number: Int) -> String {
        let words = cardinal(number)
        let irregular = ["one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth", "twelve": "twelfth"]
        let last = words.split(whereSeparator: { $0 == " " || $0 == "-" }).last.map(String.init) ?? words
        let head = String(words.dropLast(last.count))
        if let special = irregular[last] { return head + special }
        if last.hasSuffix("y") { return head + last.dropLast() + "ieth" }
        return words + "th"
    }

    /// A year as it is said: 1999 "nineteen ninety-nine", 2005 "two thousand five", 2026 "twenty twenty-six",
    /// 1900 "nineteen hundred".
    static func year(_ number: Int) -> String {
        guard (1_100...2_099).contains(number), !(2_000...2_009).contains(number) else { return cardinal(number) }
        let (high, low) = (number / 100, number % 100)
        if low == 0 { return cardinal(high) + " hundred" }
        return cardinal(high) + " " + (low < 10 ? "oh " + cardinal(low) : cardinal(low))
    }

    /// "five five five".
    static func digits(_ text: Substring) -> String {
        text.compactMap { $0.wholeNumberValue }.map { ones[$0] }.joined(separator: " ")
    }
}

import ChorusSupport
import ChorusWire
import Foundation

/// English's rules, over the words of one text.
struct EnglishRules: NormalizationRules {
    let scalars: [Unicode.Scalar]
    let words: [WordAligner.TextWord]

    typealias Planned = (word: Int, range: Range<Int>, spoken: String)

    static let books: [String: String] = {
        var books: [String: String] = [:]
        let table: [(String, [String])] = [
            ("Genesis", ["gen", "gn"]), ("Exodus", ["ex", "exod"]), ("Leviticus", ["lev", "lv"]), ("Numbers", ["num", "nm"]),
            ("Deuteronomy", ["deut", "dt"]), ("Joshua", ["josh"]), ("Judges", ["judg", "jdg"]), ("Ruth", ["ru"]), ("Samuel", ["sam", "sm"]),
            ("Kings", ["kgs", "kings"]), ("Chronicles", ["chr", "chron"]), ("Ezra", ["ezr"]), ("Nehemiah", ["neh"]), ("Esther", ["esth", "est"]),
            ("Job", ["jb"]), ("Psalm", ["ps", "psa", "pss", "psalm", "psalms"]), ("Proverbs", ["prov", "prv", "pr"]),
            ("Ecclesiastes", ["eccl", "eccles", "ecc"]), ("Song of Songs", ["song"]), ("Isaiah", ["isa", "is"]), ("Jeremiah", ["jer"]),
            ("Lamentations", ["lam"]), ("Ezekiel", ["ezek", "ezk"]), ("Daniel", ["dan", "dn"]), ("Hosea", ["hos"]), ("Joel", ["jl"]),
            ("Amos", ["am"]), ("Obadiah", ["obad", "ob"]), ("Jonah", ["jon"]), ("Micah", ["mic"]), ("Nahum", ["nah"]), ("Habakkuk", ["hab"]),
            ("Zephaniah", ["zeph"]), ("Haggai", ["hag"]), ("Zechariah", ["zech"]), ("Malachi", ["mal"]), ("Matthew", ["matt", "mt"]),
            ("Mark", ["mk", "mrk"]), ("Luke", ["lk"]), ("John", ["jn", "jhn"]), ("Acts", ["ac"]), ("Romans", ["rom"]),
            ("Corinthians", ["cor"]), ("Galatians", ["gal"]), ("Ephesians", ["eph"]), ("Philippians", ["phil", "php"]),
            ("Colossians", ["col"]), ("Thessalonians", ["thess", "thes"]), ("Timothy", ["tim"]), ("Titus", ["tit"]),
            ("Philemon", ["philem", "phlm"]), ("Hebrews", ["heb"]), ("James", ["jas"]), ("Peter", ["pet", "pt"]), ("Jude", ["jud"]),
            ("Revelation", ["rev", "revelations"]),
        ]
        for (name, abbreviations) in table {
            books[name.lowercased()] = name
            for abbreviation in abbreviations { books[abbreviation] = name }
        }
        return books
    }()

    static let abbreviations: [String: String] = [
        "mr": "Mister", "mrs": "Missus", "ms": "Miz", "jr": "Junior", "sr": "Senior", "ave": "Avenue", "rd": "Road", "mt": "Mount",
        "vs": "versus", "etc": "et cetera", "approx": "approximately", "dept": "department", "apt": "apartment", "no": "number",
    ]
    static let weekdays: [String: String] = [
        "Mon": "Monday", "Tue": "Tuesday", "Tues": "Tuesday", "Wed": "Wednesday", "Thu": "Thursday",
        "Thur": "Thursday", "Thurs": "Thursday", "Fri": "Friday", "Sat": "Saturday", "Sun": "Sunday",
    ]
    static let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
    static let monthAbbreviations: [String: Int] = [
        "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
        "oct": 10, "nov": 11, "dec": 12,
    ]

    static let units: [String: (one: String, many: String)] = [
        "km": ("kilometer", "kilometers"), "kg": ("kilogram", "kilograms"), "mg": ("milligram", "milligrams"), "mm": ("millimeter", "millimeters"),
        "cm": ("centimeter", "centimeters"), "m": ("meter", "meters"), "g": ("gram", "grams"), "lb": ("pound", "pounds"),
        "lbs": ("pound", "pounds"), "mi": ("mile", "miles"), "mph": ("mile per hour", "miles per hour"),
        "kph": ("kilometer per hour", "kilometers per hour"),
        "km/h": ("kilometer per hour", "kilometers per hour"), "ft": ("foot", "feet"), "in": ("inch", "inches"), "oz": ("ounce", "ounces"),
        "ml": ("milliliter", "milliliters"), "l": ("liter", "liters"), "°F": ("degree Fahrenheit", "degrees Fahrenheit"),
        "°C": ("degree Celsius", "degrees Celsius"), "°": ("degree", "degrees"),
    ]

    /// A number as said: "3.5" → "three point five".
    static func number(_ text: String) -> String {
        let halves = text.split(separator: ".", maxSplits: 1)
        let whole = SpokenNumbers.cardinal(Int(halves[0]) ?? 0)
        return halves.count == 2 ? whole + " point " + SpokenNumbers.digits(halves[1]) : whole
    }

    /// An address's parts: dots and hyphens said, the rest as written ("example.com" → "example dot com").
    static func address(_ text: String) -> String {
        text.replacingOccurrences(of: ".", with: " dot ").replacingOccurrences(of: "-", with: " dash ")
            .replacingOccurrences(of: "_", with: " underscore ").split(separator: " ").joined(separator: " ")
    }

    func scalar(_ offset: Int) -> Unicode.Scalar? { offset >= 0 && offset < scalars.count ? scalars[offset] : nil }

    /// Whether the word is followed directly by a period (an abbreviation's).
    func dotted(_ index: Int) -> Bool { scalar(words[index].range.upperBound) == "." }

    /// The rules' patterns, compiled once each (a text of thousands of words asks for each pattern per word).
    private static let compiled = Locked<[String: NSRegularExpression]>([:])

    func match(_ word: String, _ pattern: String) -> [String]? {
        let expression = Self.compiled.withLock { cache -> NSRegularExpression? in
            if let known = cache[pattern] { return known }
            let made = try? NSRegularExpression(pattern: pattern)
            cache[pattern] = made
            return made
        }
        guard let expression,
            let found = expression.firstMatch(in: word, range: NSRange(word.startIndex..<word.endIndex, in: word))
        else { return nil }
        return (0..<found.numberOfRanges).map { group in
            Range(found.range(at: group), in: word).map { String(word[$0]) } ?? ""
        }
    }

    func replacements() -> [Planned] {
        // References first: their book's number and name are words the other rules would read on their own.
        var planned: [Planned] = []
        var done = Set<Int>()
        for index in words.indices {
            guard let reference = scripture(at: index) else { continue }
            done.insert(index - 1)
            for item in reference {
                planned.append(item)
                done.insert(item.word)
            }
        }
        for index in words.indices where !done.contains(index) {
            if let item = single(at: index) { planned.append(item) }
        }
        return planned
    }

    /// A reference whose chapter:verse is word `index`, with its book (and the book's number) before it.
    func scripture(at index: Int) -> [Planned]? {
        guard index > 0, let parts = match(words[index].word, #"^(\d{1,3}):(\d{1,3})(?:[-–—](\d{1,3}))?$"#),
            let chapter = Int(parts[1]), let verse = Int(parts[2])
        else { return nil }
        let bookWord = words[index - 1]
        guard let book = Self.books[bookWord.word.lowercased()] else { return nil }
        var planned: [Planned] = []
        var name = book
        if index >= 2, let number = Int(words[index - 2].word), (1...3).contains(number),
            ["Samuel", "Kings", "Chronicles", "Corinthians", "Thessalonians", "Timothy", "Peter", "John"].contains(book)
        {
            planned.append((index - 2, words[index - 2].range, ["First", "Second", "Third"][number - 1]))
        }
        if book == "Psalm" { name = "Psalm" }
        if bookWord.word != name {
            // The abbreviation and its period.
            let end = dotted(index - 1) ? bookWord.range.upperBound + 1 : bookWord.range.upperBound
            planned.append((index - 1, bookWord.range.lowerBound..<end, name))
        }
        let head = book == "Psalm" ? SpokenNumbers.cardinal(chapter) : "chapter " + SpokenNumbers.cardinal(chapter)
        var said = head + ", verse " + SpokenNumbers.cardinal(verse)
        if parts.count > 3, let last = Int(parts[3]) {
            said = head + ", verses " + SpokenNumbers.cardinal(verse) + " to " + SpokenNumbers.cardinal(last)
        }
        planned.append((index, words[index].range, said))
        return planned
    }

    /// One word on its own: the first of the single-word rules that says it otherwise, in this order.
    func single(at index: Int) -> Planned? {
        if let planned = money(index) { return planned }
        if let planned = percent(index) { return planned }
        if let planned = degrees(index) { return planned }
        if let planned = time(index) { return planned }
        if let planned = phone(index) { return planned }
        if let planned = date(index) { return planned }
        if let planned = month(index) { return planned }
        if let planned = address(index) { return planned }
        if let planned = unit(index) { return planned }
        if let planned = ordinal(index) { return planned }
        if let planned = number(index) { return planned }
        if let planned = abbreviation(index) { return planned }
        return nil
    }

    /// Money: "$12.50", "£3", "€1,200".
    private func money(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        let before = scalar(range.lowerBound - 1)
        if let symbol = before, ["$", "£", "€"].contains(symbol),
            let parts = match(word, #"^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{2}))?$"#), let whole = Int(parts[1].replacingOccurrences(of: ",", with: ""))
        {
            let (one, many, cent, cents) =
                symbol == "£"
                ? ("pound", "pounds", "penny", "pence")
                : symbol == "€" ? ("euro", "euros", "cent", "cents") : ("dollar", "dollars", "cent", "cents")
            let fraction = parts.count > 2 ? Int(parts[2]) ?? 0 : 0
            var said = whole > 0 || fraction == 0 ? SpokenNumbers.cardinal(whole) + " " + (whole == 1 ? one : many) : ""
            if fraction > 0 { said += (said.isEmpty ? "" : " and ") + SpokenNumbers.cardinal(fraction) + " " + (fraction == 1 ? cent : cents) }
            return (index, (range.lowerBound - 1)..<range.upperBound, said)
        }
        return nil
    }

    /// Percent: "50%", "2.5%".
    private func percent(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        let after = scalar(range.upperBound)
        if after == "%", let parts = match(word, #"^(\d+)(?:\.(\d+))?$"#), let whole = Int(parts[1]) {
            let decimals = parts.count > 2 && !parts[2].isEmpty ? " point " + SpokenNumbers.digits(Substring(parts[2])) : ""
            return (index, range.lowerBound..<(range.upperBound + 1), SpokenNumbers.cardinal(whole) + decimals + " percent")
        }
        return nil
    }

    /// Degrees: "72°" (the sign is not part of the word).
    private func degrees(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        let after = scalar(range.upperBound)
        if after == "°", let parts = match(word, #"^(\d+(?:\.\d+)?)$"#) {
            return (index, range.lowerBound..<(range.upperBound + 1), Self.number(parts[1]) + (parts[1] == "1" ? " degree" : " degrees"))
        }
        return nil
    }

    /// Times: "4:30", "7:15pm", "7:00"; "am"/"pm" after a time.
    private func time(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        if let parts = match(word, #"^(\d{1,2}):(\d{2})(?i:\s*([ap])\.?m\.?)?$"#), let hour = Int(parts[1]), let minute = Int(parts[2]),
            hour <= 23, minute <= 59
        {
            var said =
                SpokenNumbers.cardinal(hour) + " "
                + (minute == 0 ? "o'clock" : minute < 10 ? "oh " + SpokenNumbers.cardinal(minute) : SpokenNumbers.cardinal(minute))
            if parts.count > 3, !parts[3].isEmpty {
                said =
                    SpokenNumbers.cardinal(hour) + (minute == 0 ? "" : " " + (minute < 10 ? "oh " : "") + SpokenNumbers.cardinal(minute)) + " "
                    + parts[3].lowercased() + " m"
            }
            return (index, range, said)
        }
        if index > 0, match(words[index - 1].word, #"^\d{1,2}(:\d{2})?$"#) != nil, let parts = match(word, #"^(?i)([ap])\.?m$"#) {
            let end = dotted(index) ? range.upperBound + 1 : range.upperBound
            return (index, range.lowerBound..<end, parts[1].lowercased() + " m")
        }
        return nil
    }

    /// Phone numbers: "555-123-4567", "123-4567", "(555)".
    private func phone(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        let before = scalar(range.lowerBound - 1)
        let after = scalar(range.upperBound)
        if match(word, #"^\d{3}[-.]\d{3}[-.]\d{4}$|^\d{3}[-.]\d{4}$"#) != nil {
            let groups = word.split(whereSeparator: { $0 == "-" || $0 == "." })
            return (index, range, groups.map(SpokenNumbers.digits).joined(separator: ", "))
        }
        if before == "(", after == ")", match(word, #"^\d{3}$"#) != nil {
            return (index, range, SpokenNumbers.digits(Substring(word)))
        }
        return nil
    }

    /// Dates: "3/14", "3/14/2026" (month first).
    private func date(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        if let parts = match(word, #"^(\d{1,2})/(\d{1,2})(?:/(\d{4}|\d{2}))?$"#), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...31).contains(day)
        {
            var said = Self.months[month - 1] + " " + SpokenNumbers.ordinal(day)
            if parts.count > 3, !parts[3].isEmpty, let year = Int(parts[3]) {
                said += ", " + SpokenNumbers.year(parts[3].count == 2 ? 2000 + year : year)
            }
            return (index, range, said)
        }
        return nil
    }

    /// A month's abbreviation before a day: "Jan 5".
    private func month(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        if let month = Self.monthAbbreviations[word.lowercased()], word.first?.isUppercase == true, index + 1 < words.count,
            Int(words[index + 1].word) != nil
        {
            let end = dotted(index) ? range.upperBound + 1 : range.upperBound
            return (index, range.lowerBound..<end, Self.months[month - 1])
        }
        if index > 0, Self.monthAbbreviations[words[index - 1].word.lowercased()] != nil, words[index - 1].word.first?.isUppercase == true,
            let day = Int(word), (1...31).contains(day)
        {
            return (index, range, SpokenNumbers.ordinal(day))
        }
        return nil
    }

    /// E-mail addresses and web addresses: "ana@example.com" → "ana at example dot com", "chorus.dev/docs".
    private func address(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        if word.contains("@"), let parts = match(word, #"^([A-Za-z0-9._%+-]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)$"#) {
            return (index, range, Self.address(parts[1]) + " at " + Self.address(parts[2]))
        }
        if let parts = match(
            word,
            #"^(?:https?://)?(?:www\.)?([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:com|org|net|edu|gov|io|dev|app|co|uk|us|ca|au|de|fr|info|church))(/[A-Za-z0-9._~/-]*)?$"#
        ),
            word.rangeOfCharacter(from: .letters) != nil
        {
            var said = Self.address(parts[1])
            if parts.count > 2, !parts[2].isEmpty {
                let path = parts[2].split(separator: "/").map { Self.address(String($0)) }
                said += path.isEmpty ? "" : " slash " + path.joined(separator: " slash ")
            }
            return (index, range, said)
        }
        return nil
    }

    /// A number with its unit: "5km", "10 kg" (the unit the next word), "72°F".
    private func unit(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        if let parts = match(word, #"^(\d+(?:\.\d+)?)(km|kg|mg|mm|cm|m|g|lb|lbs|mi|mph|kph|km/h|ft|in|oz|ml|l|°F|°C|°)$"#),
            let unit = Self.units[parts[2]]
        {
            return (index, range, Self.number(parts[1]) + " " + (parts[1] == "1" ? unit.one : unit.many))
        }
        if index > 0, let unit = Self.units[word], word != "in", word != "m", word != "l", word != "g",
            let amount = match(words[index - 1].word, #"^(\d+(?:\.\d+)?)$"#)
        {
            let end = dotted(index) ? range.upperBound + 1 : range.upperBound
            return (index, range.lowerBound..<end, amount[1] == "1" ? unit.one : unit.many)
        }
        return nil
    }

    /// Ordinals: "1st", "22nd".
    private func ordinal(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        if let parts = match(word, #"^(\d{1,9})(?:st|nd|rd|th)$"#), let number = Int(parts[1]) {
            return (index, range, SpokenNumbers.ordinal(number))
        }
        return nil
    }

    /// Decimals, numbers with thousands separators, years, plain numbers.
    private func number(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        if let parts = match(word, #"^(\d+)\.(\d+)$"#), let whole = Int(parts[1]) {
            return (index, range, SpokenNumbers.cardinal(whole) + " point " + SpokenNumbers.digits(Substring(parts[2])))
        }
        if match(word, #"^\d{1,3}(,\d{3})+$"#) != nil, let number = Int(word.replacingOccurrences(of: ",", with: "")) {
            return (index, range, SpokenNumbers.cardinal(number))
        }
        if match(word, #"^\d{1,15}$"#) != nil, let number = Int(word) {
            return (index, range, word.count == 4 ? SpokenNumbers.year(number) : SpokenNumbers.cardinal(number))
        }
        return nil
    }

    /// Abbreviations: "Dr." and "St." by what follows (a name: Doctor, Saint; else Drive, Street), titles, weekdays.
    private func abbreviation(_ index: Int) -> Planned? {
        let word = words[index].word
        let range = words[index].range
        let next = index + 1 < words.count ? words[index + 1].word : ""
        let capitalizedNext = next.first?.isUppercase == true
        if dotted(index) || word == word.capitalized {
            let lower = word.lowercased()
            if lower == "dr" && dotted(index) { return (index, range.lowerBound..<(range.upperBound + 1), capitalizedNext ? "Doctor" : "Drive") }
            if lower == "st" && dotted(index) { return (index, range.lowerBound..<(range.upperBound + 1), capitalizedNext ? "Saint" : "Street") }
            if dotted(index), let full = Self.abbreviations[lower], lower != "no" || Int(next) != nil {
                return (index, range.lowerBound..<(range.upperBound + 1), full)
            }
            if let full = Self.weekdays[word],
                dotted(index) || next.first?.isNumber == true || (index > 0 && words[index - 1].word.lowercased() == "on")
            {
                let end = dotted(index) ? range.upperBound + 1 : range.upperBound
                return (index, range.lowerBound..<end, full)
            }
        }
        return nil
    }
}

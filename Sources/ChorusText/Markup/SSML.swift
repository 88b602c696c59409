import ChorusSupport
import Foundation

/// The SSML subset a message's `text` may be written in when it starts with `<speak>`: `<break time="…"/>` (or
/// `strength`), `<sub alias="…">…</sub>`, `<say-as interpret-as="characters|cardinal|ordinal|date|time|telephone">…</say-as>`,
/// `<prosody rate="…">…</prosody>`, `<phoneme alphabet="ipa" ph="…">…</phoneme>`, and `<p>`, `<s>`, `<emphasis>` around
/// text. Chorus renders it for every provider: breaks are exact pauses (the text synthesized in parts), `sub` and
/// `say-as` say their reading in place of the written words, `prosody` sets the part's speaking rate. The words on
/// screen are the written text, never markup or a reading.
///
/// Malformed markup is an error naming the field and the character where it went wrong; nesting deeper than 16, more
/// than 2,000 elements, or an attribute over 1,000 characters are refused too.
public enum SSML {
    /// A stretch of written text, and what is said for it when that is not the text itself.
    public struct Run: Sendable, Equatable {
        public var written: String
        public var spoken: String?
        /// Its pronunciation in IPA (`<phoneme alphabet="ipa" ph="…">`), said where the engine takes phonemes.
        public var ipa: String?

        public init(written: String, spoken: String?, ipa: String? = nil) {
            self.written = written
            self.spoken = spoken
            self.ipa = ipa
        }
    }

    public enum Part: Sendable, Equatable {
        /// Text to say, at `rate` (1: the voice's own) when a `prosody` asks for another.
        case text([Run], rate: Double?)
        case pause(seconds: Double)
    }

    public static let maximumDepth = 16
    public static let maximumElements = 2_000
    public static let maximumAttribute = 1_000

    /// Whether `text` is SSML (starts with `<speak`, after white space).
    public static func isSSML(_ text: String) -> Bool {
        text.drop { $0.isWhitespace }.hasPrefix("<speak")
    }

    /// The written text of an SSML document (what is shown); `text` itself when it does not parse.
    public static func visible(_ text: String) -> String {
        guard let parts = try? parts(of: text, field: "text") else { return text }
        return parts.compactMap { part -> String? in
            guard case .text(let runs, _) = part else { return nil }
            return runs.map(\.written).joined()
        }.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// The document split into text parts and pauses.
    /// - Throws: `TextError` naming `field`, the character and what is wrong.
    public static func parts(of text: String, field: String) throws -> [Part] {
        var parser = Parser(scalars: Array(text.unicodeScalars), field: field)
        return try parser.document()
    }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        let field: String
        var position = 0
        var elements = 0
        var parts: [Part] = []
        var runs: [Run] = []
        var rate: Double?

        init(scalars: [Unicode.Scalar], field: String) {
            self.scalars = scalars
            self.field = field
        }

        func fail(_ reason: String, at offset: Int? = nil) -> TextError {
            TextError(subject: field, reason: "SSML at character \((offset ?? position) + 1): \(reason)")
        }

        var atEnd: Bool { position >= scalars.count }
        func peek(_ text: String) -> Bool {
            let wanted = Array(text.unicodeScalars)
            return position + wanted.count <= scalars.count && Array(scalars[position..<(position + wanted.count)]) == wanted
        }
        mutating func skipSpace() { while !atEnd && scalars[position].properties.isWhitespace { position += 1 } }

        mutating func document() throws -> [Part] {
            skipSpace()
            guard peek("<speak") else { throw fail("an SSML text starts with <speak>") }
            let (name, attributes, empty) = try openTag()
            guard name == "speak" else { throw fail("the root element is <speak>, not <\(name)>") }
            _ = attributes
            if !empty { try content(of: "speak", depth: 1) }
            skipSpace()
            guard atEnd else { throw fail("text after </speak>") }
            flush()
            // Pauses at either end would be trimmed away with the message's edges: the gap is for that.
            while case .pause? = parts.first { parts.removeFirst() }
            while case .pause? = parts.last { parts.removeLast() }
            return parts
        }

        mutating func flush() {
            let written = runs.map(\.written).joined()
            if !written.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || runs.contains(where: { $0.spoken != nil }) {
                parts.append(.text(runs, rate: rate))
            }
            runs = []
        }

        /// `<name attr="value" …>` or `<name …/>`.
        mutating func openTag() throws -> (String, [String: String], Bool) {
            let start = position
            position += 1  // <
            let name = readName()
            guard !name.isEmpty else { throw fail("a tag without a name", at: start) }
            var attributes: [String: String] = [:]
            while true {
                skipSpace()
                guard !atEnd else { throw fail("<\(name) is not closed", at: start) }
                if peek("/>") {
                    position += 2
                    elements += 1
                    return (name, attributes, true)
                }
                if peek(">") {
                    position += 1
                    elements += 1
                    return (name, attributes, false)
                }
                let attributeStart = position
                let key = readName()
                guard !key.isEmpty else { throw fail("unexpected \"\(scalars[position])\" in <\(name)>") }
                skipSpace()
                guard peek("=") else { throw fail("attribute \(key) without a value", at: attributeStart) }
                position += 1
                skipSpace()
                guard !atEnd, scalars[position] == "\"" || scalars[position] == "'" else { throw fail("attribute \(key)'s value is not quoted") }
                let quote = scalars[position]
                position += 1
                var value = String.UnicodeScalarView()
                while !atEnd && scalars[position] != quote {
                    if scalars[position] == "<" { throw fail("\"<\" inside attribute \(key)") }
                    value.append(scalars[position])
                    position += 1
                    guard value.count <= maximumAttribute else {
                        throw fail("attribute \(key) is over \(maximumAttribute) characters", at: attributeStart)
                    }
                }
                guard !atEnd else { throw fail("attribute \(key)'s value is not closed", at: attributeStart) }
                position += 1
                guard attributes[key] == nil else { throw fail("attribute \(key) given twice", at: attributeStart) }
                attributes[key] = try decodeEntities(String(value), at: attributeStart)
            }
        }

        mutating func readName() -> String {
            var name = String.UnicodeScalarView()
            while !atEnd,
                scalars[position].properties.isAlphabetic || scalars[position] == "-" || scalars[position] == ":" || scalars[position] == "_"
                    || ("0"..."9").contains(scalars[position])
            {
                name.append(scalars[position])
                position += 1
            }
            return String(name)
        }

        func decodeEntities(_ text: String, at offset: Int) throws -> String {
            guard text.contains("&") else { return text }
            var result = ""
            var rest = Substring(text)
            while let amp = rest.firstIndex(of: "&") {
                result += rest[..<amp]
                guard let semi = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semi) <= 10 else {
                    throw fail("\"&\" that is not an entity (write &amp;)", at: offset)
                }
                let entity = rest[rest.index(after: amp)..<semi]
                guard let character = XMLEntity.character(entity) else { throw fail("unknown entity &\(entity);", at: offset) }
                result += character
                rest = rest[rest.index(after: semi)...]
            }
            return result + rest
        }

        /// Text and elements up to `</name>`; with `collecting`, the text is returned instead of kept as runs, and no
        /// element may be inside (the written words of a `sub`, `say-as` or `phoneme`).
        @discardableResult
        mutating func content(of name: String, depth: Int, collecting: Bool = false) throws -> String {
            var collected = ""
            guard depth <= maximumDepth else { throw fail("elements nested deeper than \(maximumDepth)") }
            while true {
                guard !atEnd else { throw fail("<\(name)> is not closed") }
                if peek("</") {
                    let start = position
                    position += 2
                    let closing = readName()
                    skipSpace()
                    guard peek(">") else { throw fail("</\(closing) is not closed", at: start) }
                    position += 1
                    guard closing == name else { throw fail("</\(closing)> closes <\(name)>", at: start) }
                    return collected
                }
                if peek("<!--") {
                    guard
                        let end = (position..<max(position, scalars.count - 2)).first(where: {
                            scalars[$0] == "-" && scalars[$0 + 1] == "-" && scalars[$0 + 2] == ">"
                        })
                    else {
                        throw fail("a comment is not closed")
                    }
                    position = end + 3
                    continue
                }
                if peek("<") {
                    if collecting { throw fail("no elements inside <\(name)>") }
                    let start = position
                    let (child, attributes, empty) = try openTag()
                    guard elements <= maximumElements else { throw fail("more than \(maximumElements) elements") }
                    try element(child, attributes, empty: empty, depth: depth + 1, at: start)
                    continue
                }
                // Text up to the next tag.
                let start = position
                var text = String.UnicodeScalarView()
                while !atEnd && scalars[position] != "<" {
                    if scalars[position] == ">" { throw fail("\">\" in text (write &gt;)") }
                    text.append(scalars[position])
                    position += 1
                }
                let decoded = try decodeEntities(String(text), at: start)
                if collecting { collected += decoded } else { runs.append(Run(written: decoded, spoken: nil)) }
            }
        }

        mutating func element(_ name: String, _ attributes: [String: String], empty: Bool, depth: Int, at start: Int) throws {
            func text() throws -> String { empty ? "" : try content(of: name, depth: depth, collecting: true) }
            switch name {
            case "break":
                if !empty { try content(of: name, depth: depth) }
                let seconds: Double
                if let time = attributes["time"] {
                    guard let parsed = Self.seconds(time) else { throw fail("break time \"\(time)\": write 800ms or 1.5s (at most 60 s)", at: start) }
                    seconds = parsed
                } else {
                    let strengths = ["none": 0.0, "x-weak": 0.1, "weak": 0.25, "medium": 0.5, "strong": 0.75, "x-strong": 1.0]
                    guard let value = strengths[attributes["strength"] ?? "medium"] else {
                        throw fail("break strength \"\(attributes["strength"] ?? "")\": none, x-weak, weak, medium, strong or x-strong", at: start)
                    }
                    seconds = value
                }
                guard seconds > 0 else { return }
                flush()
                if case .pause(let before)? = parts.last {
                    parts[parts.count - 1] = .pause(seconds: before + seconds)
                } else {
                    parts.append(.pause(seconds: seconds))
                }
            case "sub":
                guard let alias = attributes["alias"], !alias.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw fail("<sub> needs alias=\"what to say\"", at: start)
                }
                runs.append(Run(written: try text(), spoken: alias))
            case "say-as":
                let kind = attributes["interpret-as"] ?? ""
                let written = try text()
                guard let said = try Self.sayAs(kind, written) else {
                    throw fail(
                        "say-as interpret-as=\"\(kind)\": characters, cardinal, ordinal, date, time or telephone, and text that is one", at: start)
                }
                runs.append(Run(written: written, spoken: said))
            case "phoneme":
                // Said as the IPA where the engine takes phonemes, else as written.
                guard let ph = attributes["ph"] else { throw fail("<phoneme> needs ph=\"…\"", at: start) }
                if let alphabet = attributes["alphabet"], alphabet.lowercased() != "ipa" {
                    throw fail("<phoneme alphabet=\"\(alphabet)\">: only alphabet=\"ipa\" is supported", at: start)
                }
                let ipa: String
                do {
                    ipa = try IPA.validated(ph, field: field)
                } catch let error as TextError {
                    throw fail("<phoneme ph>: \(error.reason)", at: start)
                }
                runs.append(Run(written: try text(), spoken: nil, ipa: ipa))
            case "prosody":
                let saved = rate
                if let value = attributes["rate"] {
                    guard let parsed = Self.rate(value) else {
                        throw fail("prosody rate \"\(value)\": x-slow … x-fast, a percentage (50%–200%) or a factor (0.5–2)", at: start)
                    }
                    flush()
                    rate = parsed
                }
                if !empty { try content(of: name, depth: depth) }
                if attributes["rate"] != nil {
                    flush()
                    rate = saved
                }
            case "p", "s":
                if !empty { try content(of: name, depth: depth) }
                runs.append(Run(written: " ", spoken: nil))
            case "emphasis", "voice", "lang", "mark", "audio":
                guard name == "emphasis" else {
                    throw fail("<\(name)> is not supported (supported: break, sub, say-as, prosody, phoneme, p, s, emphasis)", at: start)
                }
                if !empty { try content(of: name, depth: depth) }
            default:
                throw fail("<\(name)> is not supported (supported: break, sub, say-as, prosody, phoneme, p, s, emphasis)", at: start)
            }
        }

        static func seconds(_ text: String) -> Double? {
            let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
            let value: Double?
            if trimmed.hasSuffix("ms") {
                value = Double(trimmed.dropLast(2)).map { $0 / 1_000 }
            } else if trimmed.hasSuffix("s") {
                value = Double(trimmed.dropLast())
            } else {
                value = nil
            }
            guard let value, value >= 0, value <= SpeechControls.maximumPauseSeconds, value.isFinite else { return nil }
            return value
        }

        static func rate(_ text: String) -> Double? {
            let named = ["x-slow": 0.6, "slow": 0.8, "medium": 1.0, "fast": 1.25, "x-fast": 1.5]
            let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
            if let value = named[trimmed] { return value }
            let value = trimmed.hasSuffix("%") ? Double(trimmed.dropLast()).map { $0 / 100 } : Double(trimmed)
            guard let value, (0.5...2).contains(value) else { return nil }
            return value
        }

        /// What `say-as` says for `text`.
        static func sayAs(_ kind: String, _ text: String) throws -> String? {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { return nil }
            switch kind {
            case "characters", "spell-out":
                return trimmed.filter { !$0.isWhitespace }.map { $0.isNumber ? SpokenNumbers.digits(Substring(String($0))) : String($0) }.joined(
                    separator: " ")
            case "cardinal", "number":
                return Int(trimmed.replacingOccurrences(of: ",", with: "")).map(SpokenNumbers.cardinal)
            case "ordinal":
                return Int(trimmed.filter(\.isNumber)).map(SpokenNumbers.ordinal)
            case "telephone", "date", "time":
                let form = TextNormalizer.spokenForm(of: trimmed, lexicon: nil, normalize: true)
                if kind == "telephone" && form.replacements.isEmpty {
                    let digits = trimmed.filter(\.isNumber)
                    return digits.isEmpty ? nil : SpokenNumbers.digits(Substring(digits))
                }
                return form.replacements.isEmpty ? nil : form.spoken
            default:
                return nil
            }
        }
    }
}

public import Foundation

/// A `multipart/form-data` body (RFC 7578) split into its parts, as OpenAI's audio routes receive them (`file`,
/// `model`, `response_format`, `timestamp_granularities[]`, …).
///
/// Hostile bodies meet limits, never unbounded work: boundaries are found in one pass whatever the bytes
/// (Knuth–Morris–Pratt, so a body of 25 MB of `\r\n--` costs what any 25 MB does), at most `maxParts` parts, part
/// headers at most `maxHeaderBytes`, and a part's content is a range of the body, never copied. A body that is not
/// what its header says is a `MultipartError` naming the part and the reason.
public struct MultipartForm: Sendable {
    public struct Part: Sendable, Equatable {
        /// The form field's name (`Content-Disposition: form-data; name="…"`).
        public var name: String
        /// The file name a client gave, for file fields.
        public var filename: String?
        /// The part's `Content-Type`, if it gave one.
        public var contentType: String?
        /// Where its content is in the body.
        public var range: Range<Int>
    }

    public struct Limits: Sendable {
        public var maxParts: Int
        public var maxHeaderBytes: Int
        public init(maxParts: Int = 64, maxHeaderBytes: Int = 8 * 1024) {
            self.maxParts = maxParts
            self.maxHeaderBytes = maxHeaderBytes
        }
    }

    public let body: Data
    public let parts: [Part]

    /// The content of `part`.
    public func data(of part: Part) -> Data {
        Data(body[(body.startIndex + part.range.lowerBound)..<(body.startIndex + part.range.upperBound)])
    }

    /// The first part named `name`.
    public func part(_ name: String) -> Part? { parts.first { $0.name == name } }

    /// The first part named `name` as UTF-8 text; `nil` when there is none.
    /// - Throws: `MultipartError` when it is not UTF-8.
    public func text(_ name: String) throws -> String? {
        guard let part = part(name) else { return nil }
        guard let text = String(data: data(of: part), encoding: .utf8) else {
            throw MultipartError("part \"\(name)\" is not UTF-8 text")
        }
        return text
    }

    /// Every part named `name` as text (repeated fields such as `timestamp_granularities[]`).
    public func texts(_ name: String) throws -> [String] {
        try parts.filter { $0.name == name }.map { part in
            guard let text = String(data: data(of: part), encoding: .utf8) else { throw MultipartError("part \"\(name)\" is not UTF-8 text") }
            return text
        }
    }

    /// The boundary of a `multipart/form-data` content type.
    /// - Throws: `MultipartError` when the type is another, or the boundary is missing or not RFC 2046's (1–70
    ///   characters).
    public static func boundary(of contentType: String) throws -> String {
        let pieces = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard pieces.first?.lowercased() == "multipart/form-data" else {
            throw MultipartError("Content-Type is \(pieces.first.map { "\"\($0)\"" } ?? "missing"), not multipart/form-data")
        }
        for piece in pieces.dropFirst() {
            guard let equals = piece.firstIndex(of: "="), piece[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else {
                continue
            }
            var value = piece[piece.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard (1...70).contains(value.utf8.count), value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                throw MultipartError("the boundary must be 1 to 70 printable characters")
            }
            return value
        }
        throw MultipartError("Content-Type multipart/form-data has no boundary")
    }

    /// Splits `body` at `boundary`.
    /// - Throws: `MultipartError`.
    public init(body: Data, boundary: String, limits: Limits = Limits()) throws {
        self.body = body
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        let separator = Array("\r\n--\(boundary)".utf8)
        let searcher = ByteSearch(separator)
        // The first delimiter may start the body (no preamble) or follow a preamble and CRLF.
        var position: Int
        if bytes.starts(with: delimiter) {
            position = delimiter.count
        } else if let found = searcher.first(in: bytes, from: 0) {
            position = found + separator.count
        } else {
            throw MultipartError("no part: the boundary never occurs (truncated, or another boundary than the header's)")
        }
        var parts: [Part] = []
        while true {
            // After a delimiter: "--" closes the body; otherwise optional spaces and CRLF, then a part.
            if bytes.count - position >= 2, bytes[position] == UInt8(ascii: "-"), bytes[position + 1] == UInt8(ascii: "-") { break }
            while position < bytes.count, bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "\t") { position += 1 }
            guard bytes.count - position >= 2, bytes[position] == 0x0D, bytes[position + 1] == 0x0A else {
                throw MultipartError("part \(parts.count + 1): the body ends or breaks after a boundary (truncated?)")
            }
            position += 2
            guard parts.count < limits.maxParts else { throw MultipartError("more than \(limits.maxParts) parts") }
            let headerEnd = try Self.endOfHeaders(bytes, from: position, limit: limits.maxHeaderBytes, part: parts.count + 1)
            let headers = try Self.headers(bytes[position..<headerEnd], part: parts.count + 1)
            let contentStart = headerEnd + 4
            guard let next = searcher.first(in: bytes, from: contentStart) else {
                throw MultipartError("part \(parts.count + 1) (\"\(headers.name)\") has no closing boundary (truncated?)")
            }
            parts.append(Part(name: headers.name, filename: headers.filename, contentType: headers.contentType, range: contentStart..<next))
            position = next + separator.count
        }
        guard !parts.isEmpty else { throw MultipartError("no part") }
        self.parts = parts
    }

    /// Where the part's headers end (the index of `\r\n\r\n`).
    private static func endOfHeaders(_ bytes: [UInt8], from start: Int, limit: Int, part: Int) throws -> Int {
        // A part without headers starts with the blank line itself: it has no name.
        if bytes.count - start >= 2, bytes[start] == 0x0D, bytes[start + 1] == 0x0A { throw MultipartError("part \(part): no Content-Disposition") }
        var index = start
        let end = min(bytes.count, start + limit)
        while index + 3 < end {
            if bytes[index] == 0x0D, bytes[index + 1] == 0x0A, bytes[index + 2] == 0x0D, bytes[index + 3] == 0x0A { return index }
            index += 1
        }
        if end - start >= limit { throw MultipartError("part \(part): headers longer than \(limit) bytes") }
        throw MultipartError("part \(part): the headers never end (truncated?)")
    }

    private struct Headers {
        var name: String
        var filename: String?
        var contentType: String?
    }

    private static func headers(_ bytes: ArraySlice<UInt8>, part: Int) throws -> Headers {
        guard let text = String(bytes: bytes, encoding: .utf8) else { throw MultipartError("part \(part): headers are not UTF-8") }
        var disposition: String?
        var contentType: String?
        for line in text.components(separatedBy: "\r\n") where !line.isEmpty {
            // A line break inside a header is a header no client writes (and none can write back).
            guard !line.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw MultipartError("part \(part): a header holds a line break")
            }
            guard let colon = line.firstIndex(of: ":") else { throw MultipartError("part \(part): a header line without a colon") }
            let field = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if field == "content-disposition" { disposition = value } else if field == "content-type" { contentType = value }
        }
        guard let disposition else { throw MultipartError("part \(part): no Content-Disposition") }
        let parameters = Self.parameters(disposition)
        guard parameters.kind == "form-data", let name = parameters.values["name"], !name.isEmpty else {
            throw MultipartError("part \(part): Content-Disposition is not form-data with a name")
        }
        return Headers(name: name, filename: parameters.values["filename"], contentType: contentType)
    }

    /// `form-data; name="file"; filename="a b.m4a"` → kind and parameters (quoted strings with `\"` escapes).
    /// Read scalar by scalar, not by grapheme: a quote followed by a combining mark is still a quote.
    static func parameters(_ header: String) -> (kind: String, values: [String: String]) {
        var values: [String: String] = [:]
        let characters = Array(header.unicodeScalars)
        var index = 0
        func skipSpaces() { while index < characters.count, characters[index] == " " || characters[index] == "\t" { index += 1 } }
        var kind = String.UnicodeScalarView()
        while index < characters.count, characters[index] != ";" {
            kind.append(characters[index])
            index += 1
        }
        while index < characters.count {
            index += 1  // the ';'
            skipSpaces()
            var key = String.UnicodeScalarView()
            while index < characters.count, characters[index] != "=", characters[index] != ";" {
                key.append(characters[index])
                index += 1
            }
            guard index < characters.count, characters[index] == "=" else { continue }
            index += 1
            skipSpaces()
            var scalars = String.UnicodeScalarView()
            let quoted = index < characters.count && characters[index] == "\""
            if quoted {
                index += 1
                while index < characters.count, characters[index] != "\"" {
                    if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                    scalars.append(characters[index])
                    index += 1
                }
                index += 1
                while index < characters.count, characters[index] != ";" { index += 1 }
            } else {
                while index < characters.count, characters[index] != ";" {
                    scalars.append(characters[index])
                    index += 1
                }
            }
            let value = quoted ? String(scalars) : String(scalars).trimmingCharacters(in: .whitespaces)
            let name = String(key).trimmingCharacters(in: .whitespaces).lowercased()
            if values[name] == nil { values[name] = value }
        }
        return (String(kind).trimmingCharacters(in: .whitespaces).lowercased(), values)
    }
}

/// A multipart body that is not what its header says.
public struct MultipartError: Error, CustomStringConvertible, Sendable, Equatable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "multipart/form-data: \(reason)" }
}

/// Knuth–Morris–Pratt search for one byte pattern: linear in the bytes searched, whatever they are.
struct ByteSearch {
    let pattern: [UInt8]
    private let failure: [Int]

    init(_ pattern: [UInt8]) {
        self.pattern = pattern
        var failure = [Int](repeating: 0, count: pattern.count)
        var k = 0
        for i in 1..<max(1, pattern.count) {
            while k > 0 && pattern[i] != pattern[k] { k = failure[k - 1] }
            if pattern[i] == pattern[k] { k += 1 }
            failure[i] = k
        }
        self.failure = failure
    }

    /// The index of the first occurrence at or after `start`.
    func first(in bytes: [UInt8], from start: Int) -> Int? {
        guard !pattern.isEmpty, start <= bytes.count else { return nil }
        var k = 0
        var i = start
        while i < bytes.count {
            while k > 0 && bytes[i] != pattern[k] { k = failure[k - 1] }
            if bytes[i] == pattern[k] { k += 1 }
            if k == pattern.count { return i - pattern.count + 1 }
            i += 1
        }
        return nil
    }
}

package import Foundation

/// A single linear pass over a JSON body before it is decoded, so a body that is small in bytes but
/// expensive in structure (a million tiny messages, 100,000 levels of nesting, millions of empty
/// objects) is refused at once instead of occupying a thread while `JSONDecoder` builds it.
/// It only counts brackets outside strings; whether the JSON is valid is the decoder's business.
package struct JSONBudget {
    /// Deepest nesting of objects and arrays.
    package var maxDepth = 64
    /// Objects and arrays in the whole body.
    package var maxContainers = 100_000
    /// Elements of the top-level `arrayKey` array, if given.
    package var arrayKey: String?
    package var maxArrayElements = Int.max

    package init(maxDepth: Int = 64, maxContainers: Int = 100_000, arrayKey: String? = nil, maxArrayElements: Int = .max) {
        self.maxDepth = maxDepth
        self.maxContainers = maxContainers
        self.arrayKey = arrayKey
        self.maxArrayElements = maxArrayElements
    }

    /// - Throws: `RequestBodyError` `.tooLarge` naming `arrayKey` when it holds too many elements; `.invalid` for too
    ///   deep or too many containers. Stops at the first bound crossed.
    package func check(_ data: Data) throws {
        let key = arrayKey.map { Array("\"\($0)\"".utf8) }
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var depth = 0
            var containers = 0
            var inString = false
            var escaped = false
            var lastKeyStart = -1  // where the most recent string at depth 1 began
            var lastKeyEnd = -1
            var arrayDepth = -1  // depth inside the counted array, when in it
            var elements = 0
            var sawValue = false
            /// A byte that can start a value, directly in the counted array: the first one after `[` or
            /// a comma starts an element. (Counting values, not commas, agrees with the decoder when it
            /// accepts a trailing comma: `[{…},]` is one element.)
            func element() throws {
                guard !sawValue else { return }
                sawValue = true
                elements += 1
                if elements > maxArrayElements, let arrayKey {
                    throw RequestBodyError(
                        .tooLarge, "\(arrayKey): more than \(maxArrayElements) entries; the limit is \(maxArrayElements)",
                        field: arrayKey)
                }
            }
            var index = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == 0x5C {
                        escaped = true
                    } else if byte == 0x22 {
                        inString = false
                        if depth == 1 { lastKeyEnd = index }
                    }
                    index += 1
                    continue
                }
                switch byte {
                case 0x22:  // "
                    inString = true
                    if depth == 1 { lastKeyStart = index }
                    if depth == arrayDepth { try element() }
                case 0x7B, 0x5B:  // { [
                    if depth == arrayDepth { try element() }
                    depth += 1
                    containers += 1
                    guard depth <= maxDepth else {
                        throw RequestBodyError(.invalid, "the JSON is nested deeper than \(maxDepth) levels")
                    }
                    guard containers <= maxContainers else {
                        throw RequestBodyError(.invalid, "the JSON has more than \(maxContainers) objects and arrays")
                    }
                    if byte == 0x5B, depth == 2, let key, arrayDepth < 0, lastKeyStart >= 0, lastKeyEnd > lastKeyStart,
                        lastKeyEnd - lastKeyStart + 1 == key.count,
                        key.indices.allSatisfy({ bytes[lastKeyStart + $0] == key[$0] })
                    {
                        arrayDepth = 2
                        elements = 0
                        sawValue = false
                    }
                case 0x7D, 0x5D:  // } ]
                    if depth == arrayDepth && byte == 0x5D { arrayDepth = -2 }  // counted once
                    depth -= 1
                case 0x2C:  // ,
                    if depth == arrayDepth { sawValue = false }
                case 0x20, 0x0A, 0x0D, 0x09, 0x3A:  // whitespace, :
                    break
                default:
                    if depth == arrayDepth { try element() }
                }
                index += 1
            }
        }
    }
}

/// Why a request body was refused before anything acted on it: the service answers `.invalid` with 400
/// (`invalid_request`) and `.tooLarge` with 413 (`too_large`), naming `field` when there is one.
package struct RequestBodyError: Error, CustomStringConvertible, Sendable {
    package enum Kind: Sendable { case invalid, tooLarge }
    package let kind: Kind
    package let message: String
    package let field: String?

    package init(_ kind: Kind, _ message: String, field: String? = nil) {
        self.kind = kind
        self.message = message
        self.field = field
    }

    package var description: String { message }
}

/// Request bodies as the service decodes them.
package enum WireDecoding {
    /// Decodes a JSON body, naming the field that is wrong, after `budget` has refused bodies whose structure would be
    /// expensive to build.
    /// - Throws: `RequestBodyError`.
    package static func decode<T: Decodable>(_ type: T.Type, from data: Data, budget: JSONBudget = JSONBudget()) throws -> T {
        guard !data.isEmpty else { throw RequestBodyError(.invalid, "the body is empty; send JSON") }
        try budget.check(data)
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            let field: String?
            switch error {
            case .keyNotFound(let key, let context): field = DecodingErrorText.path(context.codingPath + [key])
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
                field = context.codingPath.isEmpty ? nil : DecodingErrorText.path(context.codingPath)
            @unknown default: field = nil
            }
            throw RequestBodyError(.invalid, DecodingErrorText.describe(error), field: field)
        }
    }
}

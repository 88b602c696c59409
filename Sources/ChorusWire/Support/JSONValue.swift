/// Any JSON value, for pass-through settings (e.g. a provider's `voice_settings`).
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as a `Double`, when it is a number.
    public var number: Double? { if case .number(let value) = self { return value } else { return nil } }
    /// The value as a `String`, when it is a string.
    public var string: String? { if case .string(let value) = self { return value } else { return nil } }
    /// The value as a `Bool`, when it is a boolean.
    public var bool: Bool? { if case .bool(let value) = self { return value } else { return nil } }
    /// The members, when it is an object.
    public var object: [String: JSONValue]? { if case .object(let value) = self { return value } else { return nil } }

    /// A canonical serialisation: keys sorted, numbers in shortest round-trip form. Equal values give equal text.
    public var canonicalText: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
            return "\(value)"
        case .string(let value): return Self.quote(value)
        case .array(let values): return "[" + values.map(\.canonicalText).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.keys.sorted().map { Self.quote($0) + ":" + members[$0]!.canonicalText }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal for `text` (the one quoting rule for every JSON Chorus writes by hand).
    public static func quote(_ text: String) -> String {
        // Most strings need no escaping: check the bytes first.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) { return "\"" + text + "\"" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

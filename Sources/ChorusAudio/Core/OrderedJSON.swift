import ChorusWire
package import Foundation

/// JSON with object members in a fixed order, for files people read (timeline, probe).
/// Foundation's encoder on Linux does not keep declaration order.
package indirect enum OrderedJSON {
    case object([(String, OrderedJSON)])
    case array([OrderedJSON])
    case string(String)
    case number(Double)
    case integer(Int)
    case bool(Bool)
    case null

    /// Pretty-printed text with two-space indentation and a final newline.
    package func text() -> String {
        var out = ""
        write(into: &out, indent: 0)
        out += "\n"
        return out
    }

    package func data() -> Data { Data(text().utf8) }

    private func write(into out: inout String, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .integer(let value): out += String(value)
        case .number(let value): out += Self.format(value)
        case .string(let value): out += Self.quote(value)
        case .array(let values):
            if values.isEmpty {
                out += "[]"
                return
            }
            let scalars = values.allSatisfy { if case .object = $0 { return false } else if case .array = $0 { return false } else { return true } }
            if scalars {
                out += "["
                for (position, value) in values.enumerated() {
                    if position > 0 { out += ", " }
                    value.write(into: &out, indent: indent)
                }
                out += "]"
                return
            }
            out += "[\n"
            for (position, value) in values.enumerated() {
                out += String(repeating: "  ", count: indent + 1)
                value.write(into: &out, indent: indent + 1)
                out += position == values.count - 1 ? "\n" : ",\n"
            }
            out += String(repeating: "  ", count: indent) + "]"
        case .object(let members):
            if members.isEmpty {
                out += "{}"
                return
            }
            out += "{\n"
            for (position, (key, value)) in members.enumerated() {
                out += String(repeating: "  ", count: indent + 1) + Self.quote(key) + ": "
                value.write(into: &out, indent: indent + 1)
                out += position == members.count - 1 ? "\n" : ",\n"
            }
            out += String(repeating: "  ", count: indent) + "}"
        }
    }

    /// A JSON string literal for `text`.
    package static func quote(_ text: String) -> String { JSONValue.quote(text) }

    /// Shortest text for a number: integers without a fraction.
    package static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

extension OrderedJSON {
    package static func optional(_ value: String?) -> OrderedJSON { value.map { .string($0) } ?? .null }
    package static func optional(_ value: Int?) -> OrderedJSON { value.map { .integer($0) } ?? .null }
    package static func optional(_ value: Double?) -> OrderedJSON { value.map { .number($0) } ?? .null }
}

/// One `Range: bytes=…` request against a body of `size` bytes (RFC 9110 §14), resolved to the bytes to send.
/// Parsed on the header's bytes (it is on every seek, so no Foundation string work).
enum ByteRange: Equatable {
    /// Send everything (no Range, or one this server ignores: several ranges, unknown units, bad syntax).
    case whole
    /// Send `range` with 206.
    case part(ClosedRange<Int>)
    /// Nothing of the body can satisfy it: 416.
    case unsatisfiable

    init(header: String?, size: Int) {
        guard let header else {
            self = .whole
            return
        }
        let bytes = Array(header.utf8).filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        let prefix = Array("bytes=".utf8)
        guard bytes.count > prefix.count, zip(bytes, prefix).allSatisfy({ ($0 | 0x20) == $1 || $0 == $1 }),
            !bytes.contains(UInt8(ascii: ",")), let dash = bytes[prefix.count...].firstIndex(of: UInt8(ascii: "-"))
        else {
            self = .whole  // several ranges are answered with the whole body, which RFC 9110 allows
            return
        }
        let first = Self.number(bytes[prefix.count..<dash])
        let last = Self.number(bytes[(dash + 1)...])
        switch (first, last) {
        case (.none, .some(let suffix)):
            guard suffix > 0, size > 0 else {
                self = .unsatisfiable
                return
            }
            self = .part(max(0, size - suffix)...(size - 1))
        case (.some(let start), .none) where dash + 1 == bytes.count:
            self = start < size ? .part(start...(size - 1)) : .unsatisfiable
        case (.some(let start), .some(let end)) where end >= start:
            self = start < size ? .part(start...min(end, size - 1)) : .unsatisfiable
        default:
            self = .whole
        }
    }

    /// Decimal digits (at most 18), or `nil` for none or anything else.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }
}

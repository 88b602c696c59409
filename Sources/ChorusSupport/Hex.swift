/// Lowercase hexadecimal, the form of every digest and id Chorus prints or accepts, without `String(format:)` (which
/// goes through Foundation and costs microseconds).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hexadecimal, two digits a byte.
    public static func string<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `text` is lowercase hexadecimal of exactly `length` digits (any length when `nil`): the check every
    /// id from outside goes through before it names a file or a row.
    public static func isLowercase(_ text: some StringProtocol, length: Int? = nil) -> Bool {
        let utf8 = text.utf8
        if let length, utf8.count != length { return false }
        return utf8.allSatisfy(isDigit)
    }

    /// `0`–`9` or `a`–`f`.
    public static func isDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
    }
}

/// XML's character references: the five named entities and numeric ones (`&#65;`, `&#x42;`). The one table for the
/// S3 client's response fields and the SSML reader, each of which decides what a bad reference means.
package enum XMLEntity {
    /// What `&name;` stands for, given `name` (between `&` and `;`); nil when it is no entity.
    package static func character(_ name: Substring) -> String? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        default:
            let number = name.hasPrefix("#x") ? UInt32(name.dropFirst(2), radix: 16) : name.hasPrefix("#") ? UInt32(name.dropFirst()) : nil
            return number.flatMap(Unicode.Scalar.init).map { String(Character($0)) }
        }
    }
}

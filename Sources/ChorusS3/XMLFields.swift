import ChorusOutbound
import ChorusSupport
import Foundation

/// The few fields Chorus reads from S3's XML answers (`UploadId`, `Key`, `Code`, …), without an XML parser:
/// S3 documents are flat where these fields occur, and their text is escaped with the five predefined entities
/// and numeric references.
enum XMLFields {
    /// The text of every `<tag>…</tag>` element, in order, unescaped.
    static func values(_ tag: String, in document: String) -> [String] {
        var results: [String] = []
        let open = "<\(tag)>"
        let close = "</\(tag)>"
        var rest = document[...]
        while let start = rest.range(of: open), let end = rest[start.upperBound...].range(of: close) {
            results.append(unescape(String(rest[start.upperBound..<end.lowerBound])))
            rest = rest[end.upperBound...]
        }
        return results
    }

    static func value(_ tag: String, in document: String) -> String? { values(tag, in: document).first }

    /// `&amp;` `&lt;` `&gt;` `&quot;` `&apos;` and `&#N;` / `&#xN;` replaced by their characters.
    static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = text[...]
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";") else {
                rest = rest[amp...]  // a bare `&`: kept as it is
                break
            }
            out += XMLEntity.character(rest[rest.index(after: amp)..<semi]) ?? String(rest[amp...semi])
            rest = rest[rest.index(after: semi)...]
        }
        return out + rest
    }

    /// `text` with `&`, `<`, `>` escaped, for the documents Chorus sends.
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}

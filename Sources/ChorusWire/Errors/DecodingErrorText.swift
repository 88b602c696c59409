import Foundation

/// Turns Foundation's `DecodingError` into a sentence that names the field by its JSON path
/// (`messages[1]: missing required field "speaker"`, `gap_ms: must be a number`).
package enum DecodingErrorText {
    package static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context.codingPath)
            return parent.isEmpty
                ? "missing required field \"\(key.stringValue)\""
                : "\(parent): missing required field \"\(key.stringValue)\""
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): must be \(name(of: type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): must be \(name(of: type)), not null"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return "not valid JSON" + (detail.map { " (\($0))" } ?? "")
            }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "not valid"
        }
    }

    /// `messages[2].speaker` for a coding path.
    package static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue { text += "[\(index)]" } else { text += text.isEmpty ? key.stringValue : ".\(key.stringValue)" }
        }
        return text
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let described = String(describing: type)
            if described.hasPrefix("Array") { return "an array" }
            if described.hasPrefix("Dictionary") || described.hasPrefix("Raw") { return "an object" }
            return "a \(described)"
        }
    }
}

import Foundation

/// Keeps API keys out of everything Chorus prints, logs, caches or writes.
public enum Secrets {
    /// `text` with every occurrence of each secret, and anything shaped like a provider key, replaced.
    public static func redact(_ text: String, secrets: [String]) -> String {
        var result = text
        for secret in secrets where secret.count >= 4 {
            result = result.replacingOccurrences(of: secret, with: "[redacted]")
        }
        // Keys echoed back partially ("Incorrect API key provided: sk-proj-ab***cd").
        if let pattern = try? NSRegularExpression(pattern: "\\bsk-[A-Za-z0-9_*\\-]{3,}") {
            result = pattern.stringByReplacingMatches(
                in: result, range: NSRange(result.startIndex..., in: result),
                withTemplate: "sk-[redacted]")
        }
        return result
    }
}

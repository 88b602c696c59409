import Foundation

enum Terminal {
    static let isInteractive = isatty(STDERR_FILENO) == 1

    static func error(_ message: String) {
        FileHandle.standardError.write(Data("chorus: error: \(message)\n".utf8))
    }

    static func warning(_ message: String) {
        FileHandle.standardError.write(Data("chorus: warning: \(message)\n".utf8))
    }

    /// Rewrites the current stderr line (terminals only).
    static func status(_ message: String) {
        guard isInteractive else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K\(message)".utf8))
    }

    static func endStatus() {
        guard isInteractive else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}

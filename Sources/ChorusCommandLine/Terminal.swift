import Foundation

/// Lines on standard error: errors and warnings named by the program (`chorus: error: …`), and a status line that
/// rewrites itself on a terminal (progress), for every command-line program of the package.
package enum Terminal {
    /// The program's name, as its messages start.
    package static let program = URL(fileURLWithPath: CommandLine.arguments.first ?? "chorus").lastPathComponent

    package static let isInteractive = isatty(STDERR_FILENO) == 1

    package static func error(_ message: String) {
        FileHandle.standardError.write(Data("\(program): error: \(message)\n".utf8))
    }

    package static func warning(_ message: String) {
        FileHandle.standardError.write(Data("\(program): warning: \(message)\n".utf8))
    }

    /// Rewrites the current stderr line (terminals only).
    package static func status(_ message: String) {
        guard isInteractive else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K\(message)".utf8))
    }

    package static func endStatus() {
        guard isInteractive else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}

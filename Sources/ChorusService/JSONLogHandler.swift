import ChorusWire
import Foundation
public import Logging

/// swift-log lines as JSON objects, one per line (for log collectors when stdout is not a terminal):
/// `{"time": "…", "level": "info", "label": "chorus", "message": "request", "request_id": "…", …}`.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let write: @Sendable (String) -> Void

    /// - Parameter write: where lines go (standard output by default).
    public init(label: String, write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardOutput) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var members: [(String, String)] = [
            ("time", DateText.iso(Date().timeIntervalSince1970)), ("level", event.level.rawValue), ("label", label), ("message", "\(event.message)"),
        ]
        for (key, value) in metadata where event.metadata?[key] == nil { members.append((key, Self.plain(value))) }
        for (key, value) in event.metadata ?? [:] { members.append((key, Self.plain(value))) }
        members.sort { $0.0 < $1.0 }
        var line = "{"
        for (position, member) in members.enumerated() {
            if position > 0 { line += "," }
            line += JSONValue.quote(member.0) + ":" + JSONValue.quote(member.1)
        }
        write(line + "}")
    }

    private static func plain(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let convertible): return convertible.description
        case .array(let values): return "[" + values.map(plain).joined(separator: ", ") + "]"
        case .dictionary(let members): return "{" + members.keys.sorted().map { "\($0): \(plain(members[$0]!))" }.joined(separator: ", ") + "}"
        }
    }

    /// Standard output, buffered (`LogOutput`).
    public static let standardOutput: @Sendable (String) -> Void = { LogOutput.standard.write($0) }
}

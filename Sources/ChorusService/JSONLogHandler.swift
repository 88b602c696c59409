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
        var object: [String: Any] = [
            "time": ISO8601DateFormatter().string(from: Date()), "level": event.level.rawValue, "label": label, "message": "\(event.message)",
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[key] = Self.plain(value) }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        write(String(decoding: data, as: UTF8.self))
    }

    private static func plain(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let convertible): return convertible.description
        case .array(let values): return values.map(plain)
        case .dictionary(let members): return members.mapValues(plain)
        }
    }

    private static let lock = NSLock()

    public static let standardOutput: @Sendable (String) -> Void = { line in
        lock.lock()
        defer { lock.unlock() }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

import ChorusOutbound
import ChorusSupport
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
            ("time", Self.time.now()), ("level", event.level.rawValue), ("label", label), ("message", "\(event.message)"),
        ]
        for (key, value) in metadata where event.metadata?[key] == nil { members.append((key, Self.plain(value))) }
        for (key, value) in event.metadata ?? [:] { members.append((key, Self.plain(value))) }
        members.sort { $0.0 < $1.0 }
        // Built as bytes: a line is written for every request, and string concatenation was most of its cost.
        var line: [UInt8] = [UInt8(ascii: "{")]
        line.reserveCapacity(320)
        for (position, member) in members.enumerated() {
            if position > 0 { line.append(UInt8(ascii: ",")) }
            Self.appendQuoted(member.0, to: &line)
            line.append(UInt8(ascii: ":"))
            Self.appendQuoted(member.1, to: &line)
        }
        line.append(UInt8(ascii: "}"))
        write(String(decoding: line, as: UTF8.self))
    }

    /// `text` as a JSON string: as it is when nothing needs escaping (nearly always), else through `JSONValue.quote`.
    private static func appendQuoted(_ text: String, to line: inout [UInt8]) {
        var plain = true
        for byte in text.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            plain = false
            break
        }
        if plain {
            line.append(UInt8(ascii: "\""))
            line.append(contentsOf: text.utf8)
            line.append(UInt8(ascii: "\""))
        } else {
            line.append(contentsOf: JSONValue.quote(text).utf8)
        }
    }

    /// The ISO time of the current second, formatted once per second.
    private static let time = SecondText()

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

/// Now as text (`DateText.iso` unless told otherwise), formatted once per second however often it is asked for.
final class SecondText: Sendable {
    private let format: @Sendable (Double) -> String
    /// The second last formatted, and its text.
    private let last = Locked((second: -1, text: ""))

    init(_ format: @escaping @Sendable (Double) -> String = DateText.iso) { self.format = format }

    func now() -> String {
        let current = Int(Date().timeIntervalSince1970)
        return last.withLock { last in
            if current != last.second {
                last.second = current
                last.text = format(Double(current))
            }
            return last.text
        }
    }
}

public import Foundation

/// A TCP proxy to a local port that a test cuts (`down`: every connection closed, new ones closed at once) and
/// restores (`up`), to make a server go away mid-test and come back (`tcp_proxy.py`). Stops with the test process.
public final class TCPProxy: @unchecked Sendable {
    public let port: Int
    private let process: Process
    private let input: Pipe
    private let output: Pipe
    private let lock = NSLock()

    public init(to target: Int) throws {
        var script = URL(fileURLWithPath: #filePath)
        script.deleteLastPathComponent()
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.appendingPathComponent("tcp_proxy.py").path, String(target)]
        input = Pipe()
        output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        struct Started: Decodable { var port: Int }
        port = try JSONDecoder().decode(Started.self, from: Data(Self.line(output).utf8)).port
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private static func line(_ pipe: Pipe) -> String {
        var line = Data()
        while let byte = try? pipe.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
            line.append(first)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Cuts every connection and refuses new ones (returns once done).
    public func down() { command("down") }

    /// Keeps every connection open but passes nothing (and leaves new ones waiting): a network that drops packets.
    public func hang() { command("hang") }

    /// Forwards again.
    public func up() { command("up") }

    private func command(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        input.fileHandleForWriting.write(Data((text + "\n").utf8))
        _ = Self.line(output)
    }
}

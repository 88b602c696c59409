import Foundation

/// A TCP proxy to a local port that a test cuts (`down`: every connection closed, new ones closed at once) and
/// restores (`up`), to make a server go away mid-test and come back (`tcp_proxy.py`). Stops with the test process.
public final class TCPProxy: @unchecked Sendable {
    public let port: Int
    private let helper: HelperScript
    private let lock = NSLock()

    public struct NotStarted: Error, CustomStringConvertible {
        public var description: String
    }

    /// Starts a proxy to `target` (on a thread of its own: Python takes a while to start on a loaded machine).
    public static func start(to target: Int) async throws -> TCPProxy {
        try await offCooperativeThreads { try TCPProxy(to: target) }
    }

    private init(to target: Int) throws {
        struct Started: Decodable { var port: Int }
        switch HelperScript.start("tcp_proxy.py", arguments: [String(target)], log: nil, announcing: Started.self) {
        case .failure(.notRun(let reason)), .failure(.notStarted(let reason)):
            throw NotStarted(description: "the TCP proxy did not start: \(reason)")
        case .success(let (helper, started)):
            self.helper = helper
            port = started.port
        }
    }

    deinit {
        try? helper.input.fileHandleForWriting.close()
        _ = helper.process.waitForEnd()
    }

    /// Cuts every connection and refuses new ones (returns once done).
    public func down() async throws { try await command("down") }

    /// Keeps every connection open but passes nothing (and leaves new ones waiting): a network that drops packets.
    public func hang() async throws { try await command("hang") }

    /// Forwards again.
    public func up() async throws { try await command("up") }

    /// Sends `text` and waits for the proxy's answer, on a thread of its own.
    private func command(_ text: String) async throws {
        try await offCooperativeThreads { self.send(text) }
    }

    private func send(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        helper.input.fileHandleForWriting.write(Data((text + "\n").utf8))
        _ = helper.readLine()
    }
}

import ChorusSupport
import ChorusWire
public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 for provider tests and benchmarks: one thread per connection, so
/// concurrent requests really overlap. Handlers see the parsed request and return a response.
public final class StubServer: Sendable {
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var query: [String: String]
        public var headers: [String: String]
        public var body: Data
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    }

    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String] = [:]
        public var body: Data = Data()
        /// Seconds after the request arrived at which to answer.
        public var delay: Double = 0
        /// Close the connection without answering.
        public var drop = false
        /// Send the head (with the whole body's length) and only this many bytes of the body, then close:
        /// a connection reset mid-body.
        public var truncateBody: Int?

        public init(
            status: Int, headers: [String: String] = [:], body: Data = Data(), delay: Double = 0, drop: Bool = false,
            truncateBody: Int? = nil
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
            self.drop = drop
            self.truncateBody = truncateBody
        }

        public static func json(_ status: Int, _ object: Any, headers: [String: String] = [:]) -> Response {
            var all = headers
            all["Content-Type"] = "application/json"
            return Response(status: status, headers: all, body: try! JSONSerialization.data(withJSONObject: object))
        }
    }

    private let socketDescriptor: Int32
    public let port: Int
    private let handler: @Sendable (Request) -> Response
    private struct State {
        var requests: [Request] = []
        var inFlight = 0
        var maxInFlight = 0
        var stopped = false
    }
    private let state = Locked(State())

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var requests: [Request] { state.withLock { $0.requests } }
    public var maxInFlight: Int { state.withLock { $0.maxInFlight } }

    public init(handler: @escaping @Sendable (Request) -> Response) throws {
        self.handler = handler
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
        }
        socketDescriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        // The loop holds the server weakly: releasing it (or `stop()`) closes the socket and ends the loop.
        let reference = WeakServer(self)
        let thread = Thread { Self.acceptLoop(descriptor, reference) }
        thread.start()
    }

    deinit { stop() }

    /// Stops accepting: shuts the listening socket down, which wakes the accept loop; the loop itself closes the
    /// descriptor as it ends. (Closing it here could hand its number to another test's new socket while the loop
    /// was between two `accept` calls — the loop would then take that server's connections and answer them with
    /// this one's handler.)
    public func stop() {
        let wasStopped = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return state.stopped
        }
        if !wasStopped { shutdown(socketDescriptor, Int32(SHUT_RDWR)) }
    }

    private static func acceptLoop(_ descriptor: Int32, _ reference: WeakServer) {
        defer { close(descriptor) }
        while true {
            let client = accept(descriptor, nil, nil)
            if client < 0 { return }
            guard let current = reference.server, !current.state.withLock({ $0.stopped }) else {
                close(client)
                return
            }
            Thread { current.serve(client) }.start()
        }
    }

    /// Waits `seconds` before answering, but no longer than the caller does: returns false as soon as the client
    /// hangs up (it timed out) or the server stops, so a stalled response never outlives the test that asked for it
    /// (a thread still asleep at the process's exit holds its request, which LeakSanitizer reports).
    private func stall(_ seconds: Double, client: Int32) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return true }
            if state.withLock({ $0.stopped }) { return false }
            var descriptor = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, Int32(min(left, 0.1) * 1000) + 1) > 0 {
                var byte: UInt8 = 0
                if recv(client, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0 { return false }  // closed (or reset)
                Thread.sleep(forTimeInterval: min(left, 0.1))  // more bytes from the caller: keep stalling
            }
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var headerEnd: Range<Data.Index>?
        while headerEnd == nil {
            let count = recv(client, &chunk, chunk.count, 0)
            if count <= 0 { return }
            buffer.append(contentsOf: chunk[0..<count])
            headerEnd = buffer.range(of: Data("\r\n\r\n".utf8))
        }
        let head = String(decoding: buffer[..<headerEnd!.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = head[0].split(separator: " ")
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        var body = Data(buffer[headerEnd!.upperBound...])
        while body.count < length {
            let count = recv(client, &chunk, chunk.count, 0)
            if count <= 0 { break }
            body.append(contentsOf: chunk[0..<count])
        }
        let target = String(requestLine.count > 1 ? requestLine[1] : "/")
        let pieces = target.split(separator: "?", maxSplits: 1)
        var query: [String: String] = [:]
        if pieces.count == 2 {
            for pair in pieces[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1)
                query[String(keyValue[0])] = keyValue.count > 1 ? String(keyValue[1]) : ""
            }
        }
        let received = Date()
        let request = Request(method: String(requestLine[0]), path: String(pieces[0]), query: query, headers: headers, body: body)
        state.withLock { state in
            state.requests.append(request)
            state.inFlight += 1
            state.maxInFlight = max(state.maxInFlight, state.inFlight)
        }
        let response = handler(request)
        // The delay counts from the request's arrival, so the time spent making the response is part of it.
        let wait = response.delay - Date().timeIntervalSince(received)
        let callerWaits = wait <= 0 || stall(wait, client: client)
        state.withLock { $0.inFlight -= 1 }
        if response.drop || !callerWaits { return }
        var text = "HTTP/1.1 \(response.status) Stub\r\nContent-Length: \(response.body.count)\r\nConnection: close\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        var output = Data(text.utf8)
        output.append(response.truncateBody.map { response.body.prefix($0) } ?? response.body)
        output.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let count = send(client, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                if count <= 0 { return }
                sent += count
            }
        }
    }
}

/// The accept loop's hold on its server: weak, so releasing the server closes the socket and ends the loop.
private final class WeakServer: @unchecked Sendable {
    weak var server: StubServer?
    init(_ server: StubServer) { self.server = server }
}

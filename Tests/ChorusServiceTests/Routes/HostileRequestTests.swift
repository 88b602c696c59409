import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusService

#if canImport(Glibc)
import Glibc
#endif

/// A raw TCP client: what a hostile or broken client sends, byte for byte, with no HTTP library to tidy it. Its
/// blocking socket work runs through `offCooperativeThreads`: the in-process service under test needs Swift's
/// cooperative threads for its own handlers.
final class RawConnection: @unchecked Sendable {
    private let socket: Int32

    /// - Parameter receiveBuffer: a small receive buffer makes a slow reader (the server cannot push ahead).
    init(port: Int, timeoutSeconds: Int = 20, receiveBuffer: Int32? = nil) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EMFILE) }
        if var size = receiveBuffer { setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close(socket) }

    /// Sends `bytes`; false once the peer has closed.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads until `bytes` bytes have arrived, the peer closes, or the timeout; returns what arrived.
    func read(bytes count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while received.count < count {
            let got = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, min($0.count, count - received.count), 0) }
            if got <= 0 { break }
            received += chunk[0..<got]
        }
        return received
    }

    /// Reads until the peer closes, `until` appears `count` times, or the timeout.
    func read(until marker: String? = nil, count: Int = 1) -> String {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let got = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if got <= 0 { break }
            received += chunk[0..<got]
            if let marker, String(decoding: received, as: UTF8.self).components(separatedBy: marker).count > count { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// One request, its whole response (the connection is closed after it).
    static func exchange(port: Int, _ request: String) throws -> String {
        let connection = try RawConnection(port: port)
        connection.send(request)
        return connection.read()
    }
}

/// Hand-written hostile requests against a live service: each gets a clear 4xx (or a closed
/// connection), never a 5xx, a crash or a hang, and the service keeps answering others meanwhile.
@Suite("Service: hostile requests")
struct HostileRequestTests {
    static let auth = "Authorization: Bearer \(serviceKey)\r\n"

    static func status(_ response: String) -> Int? {
        response.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
    }

    static func post(_ path: String, body: [UInt8], contentType: String = "application/json") -> [UInt8] {
        Array(
            "POST \(path) HTTP/1.1\r\nHost: x\r\n\(auth)Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                .utf8) + body
    }

    @Test("the JSON budget counts messages exactly, ignores brackets and commas inside strings, and bounds depth and containers")
    func budget() throws {
        let budget = JSONBudget(arrayKey: "messages", maxArrayElements: 3)
        func body(_ count: Int) -> Data {
            let message = #"{"speaker": "S,\"]", "text": "x, [y], {z}"}"#
            let list = Array(repeating: message, count: count).joined(separator: ", ")
            return Data((#"{"name": "[a, b]", "messages": ["# + list + #"], "voices": {"S": "espeak:en-us"}}"#).utf8)
        }
        try budget.check(body(0))
        try budget.check(body(3))
        #expect(throws: RequestBodyError.self) { try budget.check(body(4)) }
        try budget.check(Data(#"{"messages": [1, 2, 3], "other": [1, 2, 3, 4, 5]}"#.utf8))
        // Foundation's decoder takes a trailing comma (`[a, b, c,]` is three messages), so the budget counts
        // values, not commas (found by the request fuzz target: Fuzz/regressions/request/).
        try budget.check(Data(#"{"messages": [{"speaker": "a"}, 2, "x",]}"#.utf8))
        #expect(throws: RequestBodyError.self) { try budget.check(Data(#"{"messages": [1, [2], {"a": [1, 2, 3]}, "4",]}"#.utf8)) }
        try JSONBudget(arrayKey: "messages", maxArrayElements: 0).check(Data(#"{"messages": [ ]}"#.utf8))
        try budget.check(Data(#"{"inner": {"messages": [1, 2, 3, 4, 5]}}"#.utf8))
        #expect(throws: RequestBodyError.self) {
            try JSONBudget(maxDepth: 10).check(Data((String(repeating: "[", count: 11) + String(repeating: "]", count: 11)).utf8))
        }
        try JSONBudget(maxDepth: 10).check(Data((String(repeating: "[", count: 10) + String(repeating: "]", count: 10)).utf8))
        #expect(throws: RequestBodyError.self) {
            try JSONBudget(maxContainers: 100).check(Data(("[" + Array(repeating: "{}", count: 100).joined(separator: ",") + "]").utf8))
        }
    }

    @Test("malformed bodies: invalid UTF-8, deep nesting, a million tiny messages, oversized (declared, streamed fast, trickled), truncated chunked")
    func bodies() async throws {
        let service = try TestService()
        try await service.test(.live) { client in
            let port = try #require(client.port)
            func exchange(_ bytes: [UInt8]) async throws -> String {
                try await offCooperativeThreads {
                    let connection = try RawConnection(port: port)
                    connection.send(bytes)
                    return connection.read()
                }
            }
            // Invalid UTF-8 inside a JSON string.
            let invalid = try await exchange(
                Self.post("/v1/renders", body: Array(#"{"messages": [{"speaker": "A", "text": ""#.utf8) + [0xC3, 0x28, 0xFF] + Array(#""}]}"#.utf8)))
            #expect(Self.status(invalid) == 400, "\(invalid.prefix(300))")
            // 100,000 levels of nesting: refused, not a stack overflow.
            let deep = try await exchange(
                Self.post("/v1/renders", body: Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)))
            #expect(Self.status(deep) == 400, "\(deep.prefix(300))")
            let nestedField =
                #"{"messages": [{"speaker": "A", "text": "x", "voice_settings": "# + String(repeating: "{\"a\":", count: 50_000) + "1"
                + String(repeating: "}", count: 50_000) + "}]}"
            #expect(Self.status(try await exchange(Self.post("/v1/renders", body: Array(nestedField.utf8)))) == 400)
            // A million tiny messages (16 MB, under the 25 MB body cap): 413 naming the message limit (the
            // budget scan counts them before anything is decoded; how fast is the benchmarks' business).
            let million = #"{"messages": ["# + Array(repeating: #"{"speaker":"a"}"#, count: 1_000_000).joined(separator: ",") + "]}"
            let many = try await exchange(Self.post("/v1/renders", body: Array(million.utf8)))
            #expect(Self.status(many) == 413 && many.contains("messages"), "\(many.prefix(300))")
            // Declared larger than the cap: 413 before the body is read.
            let early = try await offCooperativeThreads {
                let declared = try RawConnection(port: port)
                declared.send(
                    "POST /v1/clips HTTP/1.1\r\nHost: x\r\n\(Self.auth)Content-Type: application/octet-stream\r\nContent-Length: 999999999\r\n\r\n")
                return declared.read(until: "\r\n\r\n")
            }
            #expect(Self.status(early) == 413, "\(early.prefix(300))")
            // Chunked, no length, past the cap: 413 once the cap is crossed, fast or trickled.
            for trickle in [false, true] {
                let response = try await offCooperativeThreads {
                    let connection = try RawConnection(port: port)
                    connection.send(
                        "POST /v1/clips HTTP/1.1\r\nHost: x\r\n\(Self.auth)Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                    )
                    let chunk = [UInt8](repeating: 0x41, count: 1_048_576)
                    for index in 0..<30 {
                        guard connection.send(Array("100000\r\n".utf8) + chunk + Array("\r\n".utf8)) else { break }
                        if trickle && index < 3 { Thread.sleep(forTimeInterval: 0.3) }
                    }
                    return connection.read(until: "\r\n\r\n")
                }
                #expect(Self.status(response) == 413, "trickle \(trickle): \(response.prefix(300))")
            }
            // A chunked body cut off mid-way: the client is gone; nothing is stored, nothing breaks.
            let cut = try await offCooperativeThreads { try RawConnection(port: port) }
            cut.send(
                "POST /v1/renders HTTP/1.1\r\nHost: x\r\n\(Self.auth)Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n{\"messages\": [{\"speaker\": \"A\", \"t"
            )
        }
        // The service still answers, and no render or clip came of any of it.
        let health = try await service.test(.live) { client in try await client.call(.get, "/health", key: nil).status }
        #expect(health == .ok)
        let renders =
            (try? FileManager.default.contentsOfDirectory(atPath: service.configuration.dataDirectory.appendingPathComponent("renders").path)) ?? []
        let clips =
            (try? FileManager.default.contentsOfDirectory(atPath: service.configuration.dataDirectory.appendingPathComponent("clips").path)) ?? []
        #expect(renders.isEmpty && clips.isEmpty, "renders \(renders), clips \(clips)")
    }

    @Test("ids with path traversal, range floods, header floods, unknown methods, pipelining, slowloris")
    func connections() async throws {
        let service = try TestService()
        try await service.test(.live) { client in
            let port = try #require(client.port)
            let manifest = try await PlayerTests.render(client, textRequest(["Range me."], voice: "espeak:en-us"))
            let audio = "/v1/renders/\(manifest.id)/audio"
            // Path traversal in every id parameter: 404 (or 400), never a file from elsewhere.
            for path in [
                "/v1/renders/..%2F..%2F..%2Fetc%2Fpasswd/audio", "/v1/renders/../../etc/passwd", "/v1/renders/%2e%2e/timeline",
                "/v1/voices/..%2F..%2Fsigning.key", "/v1/renders/\(manifest.id)%2F..%2F..%2Fsigning.key/audio",
            ] {
                let response = try await offCooperativeThreads {
                    try RawConnection.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: x\r\n\(Self.auth)Connection: close\r\n\r\n")
                }
                let status = Self.status(response) ?? 0
                #expect([400, 404, 405].contains(status), "\(path): \(response.prefix(200))")
                #expect(!response.contains("root:") && !response.contains(serviceKey))
            }
            // bytes=5-2 → the whole file; a thousand ranges → one answer at once (the service serves single ranges only).
            let reversed = try await offCooperativeThreads {
                try RawConnection.exchange(
                    port: port, "GET \(audio) HTTP/1.1\r\nHost: x\r\n\(Self.auth)Range: bytes=5-2\r\nConnection: close\r\n\r\n")
            }
            #expect(Self.status(reversed) == 200, "an invalid range is ignored (RFC 9110 §14.2)")
            let flood = (0..<1000).map { "\($0)-\($0)" }.joined(separator: ",")
            let started = Date()
            let many = try await offCooperativeThreads {
                try RawConnection.exchange(
                    port: port, "GET \(audio) HTTP/1.1\r\nHost: x\r\n\(Self.auth)Range: bytes=\(flood)\r\nConnection: close\r\n\r\n")
            }
            #expect([200, 206, 416].contains(Self.status(many) ?? 0), "\(many.prefix(200))")
            #expect(Date().timeIntervalSince(started) < 5)
            // 5,000 headers: refused or answered, the connection ends, the service stays up.
            let headers = (0..<5_000).map { "X-Flood-\($0): \($0)\r\n" }.joined()
            let flooded = try await offCooperativeThreads {
                try RawConnection.exchange(port: port, "GET /health HTTP/1.1\r\nHost: x\r\n\(headers)Connection: close\r\n\r\n")
            }
            #expect((Self.status(flooded) ?? 400) < 500, "\(flooded.prefix(200))")
            // A method the route does not take: 405 with Allow.
            let trace = try await offCooperativeThreads {
                try RawConnection.exchange(port: port, "TRACE \(audio) HTTP/1.1\r\nHost: x\r\n\(Self.auth)Connection: close\r\n\r\n")
            }
            #expect(Self.status(trace) == 405 && trace.lowercased().contains("allow: get"), "\(trace.prefix(300))")
            // Malformed query values are named, not guessed at.
            let badFlag = try await client.call(.post, "/v1/renders?stream=maybe", json: textRequest(["Hi."], voice: "espeak:en-us"))
            #expect(badFlag.status == .badRequest && badFlag.errorCode == "invalid_request", "\(badFlag.text)")
            for query in ["exp=soon", "exp=1&sig=xyz"] {
                let player = try await client.call(.get, "/v1/renders/\(manifest.id)/player?\(query)")
                #expect(player.status == .badRequest, "\(query): \(player.status)")
            }
            // Three pipelined requests in one write: three answers, in order.
            let answers = try await offCooperativeThreads {
                let pipelined = try RawConnection(port: port)
                pipelined.send(
                    "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET \(audio) HTTP/1.1\r\nHost: x\r\n\(Self.auth)Range: bytes=0-3\r\n\r\nGET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                )
                return pipelined.read()
            }
            let statuses = answers.components(separatedBy: "HTTP/1.1 ").dropFirst().compactMap { Int($0.prefix(3)) }
            #expect(statuses == [200, 206, 404], "\(statuses)")
            // Slowloris: 100 connections dripping a request head a byte at a time; meanwhile others are served at once.
            let slow = try await offCooperativeThreads { try (0..<100).map { _ in try RawConnection(port: port) } }
            let head = Array("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)
            for step in 0..<5 {
                _ = try await offCooperativeThreads { for connection in slow { connection.send([head[step]]) } }
                let begun = Date()
                let response = try await client.call(.get, "/v1/renders/\(manifest.id)")
                #expect(response.status == .ok && Date().timeIntervalSince(begun) < 5)
                try await Task.sleep(nanoseconds: 200_000_000)
            }
        }
    }

    @Test("the idle timeout closes a slowloris head and an idle keep-alive connection, never a slow response")
    func idleTimeout() async throws {
        let stub = try StubSpeech.openAIServer(latency: 2.5)
        let service = try TestService(stub: stub) { $0.idleTimeoutSeconds = 1 }
        try await service.test(.live) { client in
            let port = try #require(client.port)
            // A head dripped a byte every 0.3 s never completes: the connection is closed without an answer.
            let (dripped, dripSeconds) = try await offCooperativeThreads { () -> (String, Double) in
                let started = Date()
                let connection = try RawConnection(port: port, timeoutSeconds: 60)
                connection.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                for _ in 0..<200 where connection.send("a") { Thread.sleep(forTimeInterval: 0.3) }
                return (connection.read(), Date().timeIntervalSince(started))
            }
            // Closed long before the 60 s of dripping were over (at ~1 s; generous for a busy machine).
            #expect(dripped.isEmpty && dripSeconds < 45, "closed after \(dripSeconds) s, answered \(dripped.prefix(100))")
            // A keep-alive connection: answered, then closed once idle.
            let (answer, closedAfter) = try await offCooperativeThreads { () -> (String, Double) in
                let connection = try RawConnection(port: port, timeoutSeconds: 60)
                connection.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
                let answer = connection.read(until: "}")
                let idle = Date()
                return (answer + connection.read(), Date().timeIntervalSince(idle))
            }
            #expect(Self.status(answer) == 200 && answer.contains("\"ok\""), "\(answer.prefix(200))")
            #expect(closedAfter < 45, "idle keep-alive connection closed after \(closedAfter) s (the read waits up to 60 s)")
            // A synchronous render whose provider takes 2.5 s keeps its connection silent longer than the
            // timeout: the answer still arrives. (On a fresh connection: the test client's own one has been idle.)
            let render = try await offCooperativeThreads { () -> String in
                let connection = try RawConnection(port: port, timeoutSeconds: 120)
                connection.send(Self.post("/v1/renders", body: Array(textRequest(["Slow but sure."], voice: "openai:nova").utf8)))
                return connection.read()
            }
            #expect(Self.status(render) == 201, "\(render.prefix(300))")
        }
    }
}

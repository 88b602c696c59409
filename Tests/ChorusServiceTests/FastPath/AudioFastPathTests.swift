import AsyncHTTPClient
import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import ChorusService

/// The audio fast path (`AudioFastPath`): which requests it takes (the plain ones) and which it leaves to the
/// router (everything with an error or a detour to explain), and, over a real socket, that a connection served by
/// it keeps Hummingbird's keep-alive, idle timeout and pipelining behaviour.
@Suite("Service: the audio fast path")
struct AudioFastPathTests {
    /// A service with one finished render whose audio has been read once (so it is in memory).
    static func prepared(_ edit: @escaping (inout ServiceConfiguration) -> Void = { _ in }) async throws -> (TestService, ChorusServer, StoredRender)
    {
        let service = try TestService(edit: edit)
        let server = try await service.server()
        let stored = try await server.application.test(.router) { client in
            let created = try await client.call(.post, "/v1/renders", json: textRequest(["A short one to seek in."]))
            let id = try created.decode(RenderManifest.self).id
            #expect(try await client.call(.get, "/v1/renders/\(id)/audio").status == .ok)
            return try #require(server.state.renders.get(id))
        }
        return (service, server, stored)
    }

    static func request(_ path: String, method: HTTPRequest.Method = .get, key: String? = serviceKey, headers: HTTPFields = [:]) -> HTTPRequest {
        var fields = headers
        if let key { fields[.authorization] = "Bearer \(key)" }
        return HTTPRequest(method: method, scheme: nil, authority: nil, path: path, headerFields: fields)
    }

    /// The status of an answer, its file closed.
    static func status(_ answer: (HTTPResponse, AudioFastPath.Body?)?) -> HTTPResponse.Status? {
        if case .file(let handle, _)? = answer?.1 { try? handle.close() }
        return answer?.0.status
    }

    @Test("plain requests are answered as the router answers them; anything else is left to the router")
    func decisions() async throws {
        let (service, server, stored) = try await Self.prepared()
        let fastPath = AudioFastPath(state: server.state, authenticator: server.state.authenticator, limiter: server.state.limiter)
        let path = "/v1/renders/\(stored.manifest.id)/audio"
        let audio = try Data(
            contentsOf: service.configuration.dataDirectory.appendingPathComponent("renders/\(stored.manifest.id)/\(try #require(stored.audioName))"))

        let (ranged, body) = try #require(fastPath.answer(Self.request(path, headers: [.range: "bytes=10-19"]), started: 0))
        #expect(ranged.status == .partialContent && ranged.headerFields[.contentRange] == "bytes 10-19/\(audio.count)")
        #expect(ranged.headerFields[.init("X-Request-Id")!] != nil)
        guard case .file(let handle, let bytes)? = body else {
            Issue.record("no file in the answer")
            return
        }
        #expect(bytes == 10...19)
        try handle.close()
        let (head, headBody) = try #require(fastPath.answer(Self.request(path, method: .head), started: 0))
        #expect(head.status == .ok && head.headerFields[.contentLength] == String(audio.count) && headBody == nil)
        #expect(Self.status(fastPath.answer(Self.request(path, headers: [.ifNoneMatch: stored.etag]), started: 0)) == .notModified)
        #expect(Self.status(fastPath.answer(Self.request(path, headers: [.range: "bytes=\(audio.count)-"]), started: 0)) == .rangeNotSatisfiable)
        let signed = server.state.signer.sign(path)
        #expect(Self.status(fastPath.answer(Self.request(signed, key: nil), started: 0)) == .ok)

        // Left to the router, which explains or takes the long way.
        #expect(fastPath.answer(Self.request(path, key: nil), started: 0) == nil)
        #expect(fastPath.answer(Self.request(path, key: "wrong-key-0123456789"), started: 0) == nil)
        #expect(fastPath.answer(Self.request(signed.replacingOccurrences(of: "sig=", with: "sig=0"), key: nil), started: 0) == nil)
        #expect(fastPath.answer(Self.request(path + "?download=1"), started: 0) == nil)
        #expect(fastPath.answer(Self.request(path, method: .delete), started: 0) == nil)
        #expect(fastPath.answer(Self.request("/v1/renders/\(String(repeating: "0", count: RenderIdentity.length))/audio"), started: 0) == nil)
        #expect(fastPath.answer(Self.request("/v1/renders/\(stored.manifest.id)/audio/"), started: 0) == nil)
        let audioFile = server.state.data.render(stored.manifest.id).audioURL(try #require(stored.format))
        try Data(audio.prefix(100)).write(to: audioFile)
        #expect(fastPath.answer(Self.request(path), started: 0) == nil, "a file of another size than recorded is left to the router")
        try FileManager.default.removeItem(at: audioFile)
        #expect(fastPath.answer(Self.request(path), started: 0) == nil, "a file gone is left to the router")
        // Logged and counted like the router's requests, key never written.
        #expect(service.logs.lines.filter { $0.contains(#""path":"\#(path)""#) && $0.contains(#""status":"206""#) }.count == 1)
        #expect(!service.logs.text.contains(serviceKey))
    }

    @Test("the rate limit holds on the fast path: past it the router answers 429")
    func rateLimit() async throws {
        let (_, server, stored) = try await Self.prepared { $0.rateLimitPerMinute = 3 }
        let path = "/v1/renders/\(stored.manifest.id)/audio"
        // The bucket refills continuously (one token per 20 s) and the render before took two: count until the first
        // 429, then every request within its Retry-After (less the second it is rounded up by) must be refused too.
        try await server.application.test(.live) { client in
            let port = try #require(client.port)
            var allowed = 0
            var refusal: (at: Date, retryAfter: Double)?
            while refusal == nil && allowed <= 3 {
                let sent = Date()  // the refusal counts from before the request: a token cannot have come since
                let response = try await HTTPClient.shared.execute(
                    LiveServiceTests.request(port, path, headers: [("Range", "bytes=0-9")]), timeout: .seconds(10))
                if response.status == .partialContent {
                    allowed += 1
                } else {
                    #expect(response.status == .tooManyRequests)
                    let retryAfter = try #require(response.headers.first(name: "retry-after").flatMap(Double.init))
                    refusal = (sent, retryAfter)
                }
            }
            #expect(allowed <= 3, "a bucket of 3 let \(allowed) through")
            let (at, retryAfter) = try #require(refusal)
            for _ in 0..<2 {
                let response = try await HTTPClient.shared.execute(
                    LiveServiceTests.request(port, path, headers: [("Range", "bytes=0-9")]), timeout: .seconds(10))
                if Date().timeIntervalSince(at) < retryAfter - 1 { #expect(response.status == .tooManyRequests) }
            }
        }
    }

    @Test(
        "a connection served by the fast path keeps alive past the idle timeout while busy, closes when idle, and answers pipelined requests in order"
    )
    func connection() async throws {
        let (_, server, stored) = try await Self.prepared { $0.idleTimeoutSeconds = 1 }
        let path = "/v1/renders/\(stored.manifest.id)/audio"
        let head = "HEAD \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(serviceKey)\r\n\r\n"
        try await server.application.test(.live) { client in
            let port = try #require(client.port)
            let results = try await offCooperativeThreads { () -> (answers: [Bool], pipelined: String, closedWhenIdle: Bool, closed: String) in
                let connection = try RawConnection(port: port, timeoutSeconds: 5)
                var answers: [Bool] = []
                for _ in 0..<8 {  // 3.2 s on one connection, idle timeout 1 s
                    connection.send(head)
                    answers.append(connection.read(until: "\r\n\r\n").hasPrefix("HTTP/1.1 200"))
                    Thread.sleep(forTimeInterval: 0.4)
                }
                connection.send(head + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n" + head)
                let pipelined = connection.read(until: "HTTP/1.1 ", count: 3)
                Thread.sleep(forTimeInterval: 0.3)
                _ = connection.read(until: "\r\n\r\n", count: 3)  // the rest of the last answers, if any
                let before = Date()
                let after = connection.read()  // the server closes an idle connection
                let closedWhenIdle = after.isEmpty && Date().timeIntervalSince(before) < 4
                let closingStarted = Date()
                let closing = try RawConnection.exchange(port: port, head.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n"))
                // Read to the end: the server closed the connection after the response, long before the read timeout.
                return (answers, pipelined, closedWhenIdle, Date().timeIntervalSince(closingStarted) < 4 ? closing : "not closed")
            }
            #expect(results.answers == Array(repeating: true, count: 8))
            let answers = results.pipelined.components(separatedBy: "HTTP/1.1 ").dropFirst()
            #expect(answers.count >= 2)
            #expect(answers.first?.lowercased().contains("accept-ranges: bytes") == true)
            #expect(answers.dropFirst().first?.lowercased().contains("accept-ranges") == false, "the second answer is /health's")
            #expect(results.closedWhenIdle)
            #expect(results.closed.hasPrefix("HTTP/1.1 200") && results.closed.lowercased().contains("connection: close"))
        }
    }

    @Test("a slow reader gets the whole file: the idle timeout counts from the end of the bytes, not of the writing")
    func slowReader() async throws {
        let service = try TestService { $0.idleTimeoutSeconds = 1 }
        let server = try await service.server()
        // Made in-process: no pooled client connection meets the 1 s idle timeout.
        let manifest = try await server.application.test(.router) { client in
            // A minute of audio as WAV (~5 MB): more than the kernel's socket buffers hold, so the sending takes as long as the reading.
            let clip = try await client.call(.post, "/v1/clips", body: try await ClipAndVoiceRouteTests.voiceNote(seconds: 60)).decode(ClipInfo.self)
            return try await client.call(
                .post, "/v1/renders",
                json: #"""
                    {"messages": [{"speaker": "Mom", "clip": "\#(clip.id)"}], "output": {"format": "wav"}}
                    """#
            ).decode(RenderManifest.self)
        }
        let size = try #require(server.state.renders.get(manifest.id)).audioBytes
        #expect(size > 4_000_000)
        try await server.application.test(.live) { client in
            let port = try #require(client.port)
            let received = try await offCooperativeThreads { () -> Int in
                let connection = try RawConnection(port: port, timeoutSeconds: 10, receiveBuffer: 4_096)
                connection.send("GET \(manifest.audioURL!) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(serviceKey)\r\n\r\n")
                var total = 0
                while true {  // at most ~2.5 MB a second: the answer takes two idle timeouts or more to read
                    let part = connection.read(bytes: 262_144)
                    if part.isEmpty { break }
                    total += part.count
                    Thread.sleep(forTimeInterval: 0.1)
                }
                return total
            }
            #expect(received > size, "got \(received) bytes of a \(size)-byte file plus its head")
        }
    }
}

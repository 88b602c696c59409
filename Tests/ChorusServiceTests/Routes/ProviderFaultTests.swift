import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusOutbound
@testable import ChorusService

/// A provider misbehaving, driven through the service (`POST /v1/renders` → engine → provider over HTTP):
/// 429 storms with and without `Retry-After`, 5xx, a connection reset mid-body, a hang, a body that is not
/// audio, and a provider that is down for the whole render. Each fault either passes (retried) or ends in the
/// fallback voice or a clear `502`; the cache holds only entries that decode, and the provider key appears in
/// no response, log line or stored file.
@Suite("Service: provider faults")
struct ProviderFaultTests {
    enum Fault: String, CaseIterable, Sendable {
        case rateLimited, rateLimitedWithoutRetryAfter, serverError, resetMidBody, hang, notAudio

        /// What the provider answers instead of speech.
        func response(for text: String) -> StubServer.Response {
            switch self {
            case .rateLimited:
                return .json(
                    429, ["error": ["message": "Rate limit reached for tts-1", "type": "requests", "code": "rate_limit_exceeded"]],
                    headers: ["Retry-After": "0"])
            case .rateLimitedWithoutRetryAfter:
                return .json(429, ["error": ["message": "Rate limit reached for tts-1", "type": "requests", "code": "rate_limit_exceeded"]])
            case .serverError:
                return .json(500, ["error": ["message": "The server had an error while processing your request.", "type": "server_error"]])
            case .resetMidBody:
                let pcm = StubSpeech.pcm16(for: text)
                return StubServer.Response(status: 200, headers: ["Content-Type": "audio/pcm"], body: pcm, truncateBody: pcm.count / 3)
            case .hang:
                return StubServer.Response(status: 200, headers: ["Content-Type": "audio/pcm"], body: StubSpeech.pcm16(for: text), delay: 30)
            case .notAudio:
                return StubServer.Response(
                    status: 200, headers: ["Content-Type": "text/html"],
                    body: Data("<html><body>Service maintenance</body></html>".utf8))
            }
        }

        /// The provider timeout: short where the fault is a hang, else the tests' usual one.
        var providerTimeout: Int64 { self == .hang ? 2 : 30 }

        /// Retried by the engine's policy (a body that is not audio is not: asking again gets the same page).
        var isTransient: Bool { self != .notAudio }
    }

    /// A provider whose first `faults` answers are `fault`, then speech.
    static func provider(_ fault: Fault, faults: Int) throws -> StubServer {
        let calls = FaultCounter()
        return try StubServer { request in
            let text = request.json?["input"] as? String ?? ""
            return calls.next() <= faults
                ? fault.response(for: text)
                : StubServer.Response(status: 200, headers: ["Content-Type": "audio/pcm"], body: StubSpeech.pcm16(for: text))
        }
    }

    @Test(
        "a transient fault (three times in a row) is retried: the render succeeds, the retries are counted, nothing half-cached",
        arguments: Fault.allCases.filter(\.isTransient))
    func transient(_ fault: Fault) async throws {
        let stub = try Self.provider(fault, faults: 3)
        let service = try TestService(stub: stub, providerTimeout: fault.providerTimeout)
        let body = textRequest(["The bread is in the oven, \(fault.rawValue)."], voice: "openai:nova")
        try await service.test { client in
            let first = try await client.call(.post, "/v1/renders", json: body)
            #expect(first.status == .created, "\(fault): \(first.text)")
            let manifest = try first.decode(RenderManifest.self)
            #expect(manifest.status == .done && manifest.timeline?.segments.first?.fallback == nil)
            // (A busy machine can make a good answer miss the 2 s timeout of the hang case too: one more retry.)
            #expect(fault == .hang ? stub.requests.count >= 4 : stub.requests.count == 4, "\(fault): three faults, then speech")
            let requests = stub.requests.count
            let audio = try await client.call(.get, "/v1/renders/\(manifest.id)/audio")
            #expect(try AudioFileReader(data: audio.data, name: "audio").readAll().frameCount == manifest.samples)
            let again = try await client.call(.post, "/v1/renders", json: body)
            #expect(again.status == .ok && stub.requests.count == requests, "the stored render, no new provider request")
        }
        try await Self.checkNoLeaks(service, audioEntries: 1)
    }

    @Test(
        "a fault for good: 502 naming the provider and the message within the retry budget; with a fallback voice the render succeeds",
        arguments: Fault.allCases)
    func forGood(_ fault: Fault) async throws {
        let stub = try Self.provider(fault, faults: .max)
        let service = try TestService(stub: stub, providerTimeout: fault.providerTimeout)
        try await service.test { client in
            let failed = try await client.call(.post, "/v1/renders", json: textRequest(["Hello from \(fault.rawValue)."], voice: "openai:nova"))
            #expect(failed.status == .badGateway, "\(fault): \(failed.text)")
            let error = try failed.decode(ErrorBody.self).error
            #expect(error.code == "provider_error" && error.message.contains("openai") && error.message.contains("messages[0]"), "\(error.message)")
            #expect(!failed.text.contains("SECRET"))
            #expect(stub.requests.count == (fault.isTransient ? RetryPolicy().maxAttempts : 1), "\(fault): \(stub.requests.count) requests")
            let rescued = try await client.call(
                .post, "/v1/renders",
                json: textRequest(
                    ["Hello again from \(fault.rawValue)."], voice: "openai:nova",
                    extra: #", "output": {"fallback_voice": "espeak:en-us"}"#))
            #expect(rescued.status == .created, "\(fault): \(rescued.text)")
            let segment = try rescued.decode(RenderManifest.self).timeline?.segments.first
            #expect(segment?.fallback == true && segment?.voice == "espeak:en-us")
        }
        try await Self.checkNoLeaks(service, audioEntries: 1)  // the fallback's espeak speech; nothing from the failing provider
    }

    @Test("a provider that is down for the whole render (connection refused): 502 after the retries, or the fallback voice")
    func providerDown() async throws {
        let stub = try StubServer { _ in StubServer.Response(status: 500) }
        stub.stop()
        let service = try TestService(stub: stub, providerTimeout: 1)
        try await service.test { client in
            let started = Date()
            let failed = try await client.call(.post, "/v1/renders", json: textRequest(["Nobody home."], voice: "openai:nova"))
            #expect(failed.status == .badGateway && failed.errorCode == "provider_error", "\(failed.text)")
            // About 7 s of backoff; generous for a busy machine (before, each attempt waited out the connect timeout).
            #expect(Date().timeIntervalSince(started) < 120, "bounded by the retry policy")
            let rescued = try await client.call(
                .post, "/v1/renders",
                json: textRequest(["Nobody home."], voice: "openai:nova", extra: #", "output": {"fallback_voice": "espeak:en-us"}"#))
            #expect(rescued.status == .created, "\(rescued.text)")
            #expect(try rescued.decode(RenderManifest.self).timeline?.segments.first?.fallback == true)
        }
        try await Self.checkNoLeaks(service, audioEntries: 1)
    }

    /// The cache holds `audioEntries` syntheses, each with its metadata and audio that decodes, and no
    /// temporary file; the provider key is in no log line and no file of the data folder.
    static func checkNoLeaks(_ service: TestService, audioEntries: Int) async throws {
        let data = service.configuration.dataDirectory
        func regularFiles() -> [URL] {
            (FileManager.default.enumerator(at: data, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? [])
                .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
        }
        let files = regularFiles()
        let cache = files.filter { $0.path.contains("/cache/") }
        let audio = cache.filter { $0.pathExtension != "json" }
        #expect(audio.count == audioEntries, "\(cache.map(\.lastPathComponent))")
        for file in audio {
            #expect(try AudioFileReader(url: file).readAll().frameCount > 0, "\(file.lastPathComponent) decodes")
            #expect(FileManager.default.fileExists(atPath: file.deletingPathExtension().path + ".json"), "\(file.lastPathComponent) has its metadata")
        }
        #expect(!files.contains { $0.lastPathComponent.contains("partial") }, "no temporary file left")
        for file in files {
            // The embedded database's write-ahead log goes when its last connection closes (its pages are then in
            // chorus.sqlite, which is read here too).
            guard FileManager.default.fileExists(atPath: file.path) || !file.lastPathComponent.hasPrefix(LocalDatabase.fileName) else { continue }
            let bytes = try Data(contentsOf: file)
            #expect(bytes.range(of: Data(providerKey.utf8)) == nil && bytes.range(of: Data("SECRET".utf8)) == nil, "\(file.lastPathComponent)")
        }
        #expect(!service.logs.text.contains("SECRET"), "no key in the logs")
    }
}

final class FaultCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}

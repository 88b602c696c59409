import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

@testable import ChorusService
@testable import ChorusSpeech

let serviceKey = "chorus-test-key-0123456789-SECRET"
let providerKey = "sk-provider-SECRET-abcdef0123456789"

/// Log lines written by the service under test, for checking what it says (and never says).
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []
    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
    var text: String { lines.joined(separator: "\n") }
    var logger: Logger {
        var logger = Logger(label: "chorus-test") { label in JSONLogHandler(label: label) { line in self.append(line) } }
        logger.logLevel = .debug
        return logger
    }
    private func append(_ line: String) {
        lock.lock()
        stored.append(line)
        lock.unlock()
    }
}

/// A service on a private data folder with one API key, espeak-ng, and (optionally) stub OpenAI and
/// ElevenLabs providers at `stub`.
struct TestService {
    let directory: TemporaryDirectory
    var configuration: ServiceConfiguration
    let logs = LogCapture()

    init(stub: StubServer? = nil, providerTimeout: Int64 = 30, edit: (inout ServiceConfiguration) -> Void = { _ in }) throws {
        directory = try TemporaryDirectory(prefix: "chorus-service")
        configuration = try ServiceConfiguration(environment: [:])
        configuration.dataDirectory = directory.file("data")
        configuration.apiKeys = [serviceKey]
        configuration.port = 0
        configuration.workers = 2
        var providers: [any VoiceProvider] = [FliteProvider(), EspeakProvider()]
        if let stub {
            providers.append(OpenAIProvider(baseURL: stub.baseURL + "/v1", apiKey: providerKey, timeoutSeconds: providerTimeout))
            providers.append(ElevenLabsProvider(baseURL: stub.baseURL, apiKey: providerKey, timeoutSeconds: providerTimeout))
        } else {
            providers.append(OpenAIProvider(apiKey: nil))
            providers.append(ElevenLabsProvider(apiKey: nil))
        }
        configuration.registry = VoiceRegistry(providers: providers)
        configuration.transcriptionModel = nil  // loading Whisper costs a second of a core: only the tests that transcribe
        edit(&configuration)
    }

    func server() async throws -> ChorusServer { try await ChorusServer(configuration: configuration, logger: logs.logger) }

    /// Runs `body` against the application, in-process (`.router`) or over a real socket (`.live`), then, whether `body`
    /// succeeded or not, does what `chorus serve`'s shutdown does besides stopping the HTTP server (`ChorusServer.stop`:
    /// renders drained, the embedded database closed — released instead, it closed in the background, and SQLite
    /// removing its log raced this folder's removal, which gave up and left the folder behind); a test that has not
    /// ended in 10 minutes (a request, a socket or the server's shutdown waiting for ever) fails, naming
    /// where it was called, instead of holding the whole run.
    func test<T: Sendable>(
        _ setup: TestingSetup = .router, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> T
    ) async throws -> T {
        let server = try await server()
        let application = UncheckedBox(server.application)
        return try await withinTimeLimit(600, "the service test at \(sourceLocation.fileName):\(sourceLocation.line)") {
            let result: T
            do {
                result = try await application.value.test(setup, body)
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
            return result
        }
    }
}

extension TestClientProtocol {
    /// A request with the test key (unless `key` says otherwise) and a JSON or raw body.
    func call(
        _ method: HTTPRequest.Method, _ uri: String, json: String? = nil, body: Data? = nil, key: String? = serviceKey,
        headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        if let key { headers[.authorization] = "Bearer \(key)" }
        var buffer: ByteBuffer?
        if let json {
            headers[.contentType] = "application/json"
            buffer = ByteBuffer(string: json)
        } else if let body {
            buffer = ByteBuffer(bytes: body)
        }
        return try await execute(uri: uri, method: method, headers: headers, body: buffer)
    }
}

extension TestResponse {
    var data: Data { Data(body.readableBytesView) }
    var text: String { String(buffer: body) }
    /// The body as `type`; a body that is not one names the status and what came back (a 503's error, say).
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw UndecodableResponse(status: status.code, expected: "\(type)", body: String(text.prefix(300)))
        }
    }
    var errorCode: String? { (try? decode(ErrorBody.self))?.error.code }
}

/// A response whose body is not what the test expected, with what it was.
struct UndecodableResponse: Error, CustomStringConvertible {
    var status: Int
    var expected: String
    var body: String
    var description: String { "expected \(expected), got \(status): \(body)" }
}

/// A small spoken conversation for renders.
func textRequest(_ texts: [String], voice: String? = nil, format: String? = nil, extra: String = "") -> String {
    let messages = texts.enumerated().map { index, text in
        #"{"speaker": "S\#(index % 2)", "text": "\#(text)"\#(voice.map { #", "voice": "\#($0)""# } ?? "")}"#
    }
    let output = format.map { #", "output": {"format": "\#($0)"}"# } ?? ""
    return #"{"messages": [\#(messages.joined(separator: ", "))]\#(output)\#(extra)}"#
}

/// Carries a value that is used by one task at a time across a task boundary.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

import Foundation

/// The tests' S3-compatible servers: moto's server mode (`s3_server.py`) on free loopback ports, one process each
/// for the whole test run, stopped when the test process ends (their standard input closes). `checked` verifies
/// every request's signature against an IAM key made at start; `open` accepts any request (moto cannot verify a
/// presigned URL while it checks signatures). In CI (`CI=true`) a server that cannot start fails the tests that
/// need it; elsewhere they are skipped, saying what is missing.
public final class S3TestServer: Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let endpoint: String
    public let accessKeyID: String
    public let secretAccessKey: String
    private let input: Pipe

    /// Which of the two servers: `checked` verifies signatures, `open` accepts any request.
    public enum Mode: Sendable { case checked, open }

    private static let checkedServer = StartedOnce { start(auth: true) }
    private static let openServer = StartedOnce { start(auth: false) }

    /// The server of `mode`, started by the first test that asks (off Swift's cooperative threads).
    /// - Throws: `Unavailable` when it could not start.
    public static func running(_ mode: Mode = .checked) async throws -> S3TestServer {
        try await (mode == .checked ? checkedServer : openServer).value.get()
    }

    /// Whether tests that need the server should run: always in CI (where a missing server is a failure).
    public static var shouldRun: Bool {
        get async { await checkedServer.shouldRun(skipping: "S3 tests") }
    }

    /// The environment a `--storage s3://…` service reads, for this server.
    public var environment: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey, "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": endpoint]
    }

    /// A bucket name no other test uses.
    public static func uniqueBucket(_ label: String) -> String {
        "chorus-\(label.lowercased().filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString.prefix(8).lowercased())"
    }

    private init(endpoint: String, accessKeyID: String, secretAccessKey: String, input: Pipe) {
        self.endpoint = endpoint
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.input = input
    }

    private struct Started: Decodable { var port: Int, key: String, secret: String }

    private static func start(auth: Bool) -> Result<S3TestServer, Unavailable> {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-s3-server-\(getpid())-\(auth).log")
        switch HelperScript.start("s3_server.py", arguments: auth ? ["--auth"] : [], log: log, announcing: Started.self) {
        case .failure(.notRun(let reason)):
            return .failure(Unavailable(description: reason))
        case .failure(.notStarted(let detail)):
            return .failure(Unavailable(description: "moto's S3 server did not start (pip install 'moto[server]'): \(detail)"))
        case .success(let (helper, started)):
            // The pipe is held for the life of the test process: closing it stops the server.
            return .success(
                S3TestServer(
                    endpoint: "http://127.0.0.1:\(started.port)", accessKeyID: started.key,
                    secretAccessKey: started.secret, input: helper.input))
        }
    }
}

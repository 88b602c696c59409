import Foundation

/// The tests' PostgreSQL: a throwaway cluster (`pg_server.py`: initdb in a temporary folder, the server on a free
/// loopback port, password authentication, run as `nobody` when the tests run as root), one for the whole test run,
/// stopped and deleted when the test process ends (its standard input closes). Each test takes a database of its own
/// (`database(_:)`). In CI (`CI=true`) a server that cannot start fails the tests that need it; elsewhere they are
/// skipped, saying what is missing.
public final class PostgresTestServer: Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public let port: Int
    public let user: String
    public let password: String
    private let input: Pipe

    private static let server = StartedOnce { start() }

    /// The server, started by the first test that asks (off Swift's cooperative threads).
    /// - Throws: `Unavailable` when it could not start.
    public static func shared() async throws -> PostgresTestServer {
        try await server.value.get()
    }

    /// Whether tests that need the server should run: always in CI (where a missing server is a failure).
    public static var shouldRun: Bool {
        get async { await server.shouldRun(skipping: "PostgreSQL tests") }
    }

    /// The URL of database `name` (not created).
    public func url(_ name: String) -> String { "postgres://\(user):\(password)@127.0.0.1:\(port)/\(name)?sslmode=disable" }

    /// A new, empty database no other test uses; returns its URL.
    public func database(_ label: String) async throws -> String {
        let name = "chorus_\(label.lowercased().filter { $0.isLetter || $0.isNumber })_\(UUID().uuidString.prefix(8).lowercased())"
        try await psql(url("postgres"), "CREATE DATABASE \(name)")
        return url(name)
    }

    /// Runs `sql` with `psql` (an independent client: the tests' referee of what the service stored); returns its
    /// output, unaligned, tuples only, fields separated by `|`.
    @discardableResult
    public func psql(_ url: String, _ sql: String) async throws -> String {
        let run = try await ToolRun.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql])
        guard run.status == 0 else {
            throw Unavailable(description: "psql failed: \(run.errors.prefix(400))")
        }
        return run.output
    }

    private init(port: Int, user: String, password: String, input: Pipe) {
        self.port = port
        self.user = user
        self.password = password
        self.input = input
    }

    private struct Started: Decodable { var port: Int, user: String, password: String }

    private static func start() -> Result<PostgresTestServer, Unavailable> {
        // Errors and the server's log to a file.
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-pg-server-\(getpid()).log")
        switch HelperScript.start("pg_server.py", log: log, announcing: Started.self) {
        case .failure(.notRun(let reason)):
            return .failure(Unavailable(description: reason))
        case .failure(.notStarted(let detail)):
            return .failure(Unavailable(description: "PostgreSQL did not start (apt-get install postgresql): \(detail)"))
        case .success(let (helper, started)):
            return .success(PostgresTestServer(port: started.port, user: started.user, password: started.password, input: helper.input))
        }
    }
}

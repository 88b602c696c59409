import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Runs the `chorus` binary built beside the tests.
struct CLI {
    /// The `chorus` of the same build as the running test executable (`.build/debug`, or `.build-asan/debug` for
    /// a sanitized run — never a binary of another build).
    static let binary: URL = {
        let tests = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map(URL.init(fileURLWithPath:))
        if let beside = tests?.deletingLastPathComponent().appendingPathComponent("chorus"), FileManager.default.isExecutableFile(atPath: beside.path)
        {
            return beside
        }
        return Repository.file(".build/debug/chorus")
    }()

    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `chorus arguments` in `directory` to its end, waiting on a thread of its own (never one of Swift's
    /// cooperative threads, which every other test of the process needs meanwhile).
    static func run(_ arguments: [String], in directory: URL, environment: [String: String]? = nil) async throws -> Result {
        try await offCooperativeThreads { try runBlocking(arguments, in: directory, environment: environment) }
    }

    private static func runBlocking(_ arguments: [String], in directory: URL, environment: [String: String]?) throws -> Result {
        let run = try ToolRun(arguments, executable: binary, directory: directory, environment: environment, limit: 900, trimmed: false)
        return Result(status: run.status, stdout: run.output, stderr: run.errors)
    }
}

extension Process {
    /// Waits for the process to end on a thread of its own (never one of Swift's cooperative threads) and says how.
    @discardableResult
    func exited() async -> ProcessEnd { await ended() }
}

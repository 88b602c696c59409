import Foundation
import Synchronization

/// A Python helper beside these files (`pg_server.py`, `s3_server.py`, `tcp_proxy.py`): started with its standard input
/// held open (the helpers stop when it closes, so they go with the test process however it ends), announcing itself
/// with one line of JSON on standard output. Its standard error goes to a file (`log`), not a pipe nobody reads while
/// it runs (a full pipe would stall it), or nowhere.
struct HelperScript {
    enum Failure: Error {
        /// python3 could not be run.
        case notRun(String)
        /// The helper ended, or said something else, before announcing itself: the end of its log.
        case notStarted(String)
    }

    let process: Process
    let input: Pipe
    let output: Pipe

    /// Starts `script` and decodes its announcement as `Announcement`.
    static func start<Announcement: Decodable>(_ script: String, arguments: [String] = [], log: URL?,
                                               announcing: Announcement.Type) -> Result<(HelperScript, Announcement), Failure> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Repository.supportScript(script).path] + arguments
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        if let log {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            process.standardError = try? FileHandle(forWritingTo: log)
        } else {
            process.standardError = FileHandle.nullDevice
        }
        do { try process.run() } catch {
            return .failure(.notRun("cannot start python3 (\(error))"))
        }
        let helper = HelperScript(process: process, input: input, output: output)
        guard let announcement = try? JSONDecoder().decode(Announcement.self, from: Data(helper.readLine().utf8)) else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            let detail = log.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
            return .failure(.notStarted(String(detail.suffix(400))))
        }
        return .success((helper, announcement))
    }

    /// The helper's next line of output (without its end).
    func readLine() -> String {
        var line = Data()
        while let byte = try? output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
            line.append(first)
        }
        return String(decoding: line, as: UTF8.self)
    }
}

/// A command run to its end, as the tests' referees run them (`/usr/bin/env` finds it): its exit status and output.
/// Both pipes are read to the end before waiting (errors on a thread of their own), so neither can fill and stall it.
/// From async code use `ToolRun.run`, which waits on a thread of its own: a test that blocks one of Swift's
/// cooperative threads (two on a 2-core machine) stalls every other test of the process meanwhile.
public struct ToolRun: Sendable {
    public let status: Int32
    public let output: String
    public let errors: String

    /// Runs `arguments` on a thread of its own and resumes when it has ended.
    public static func run(_ arguments: [String]) async throws -> ToolRun {
        try await offCooperativeThreads { try ToolRun(arguments) }
    }

    init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        final class Collected: @unchecked Sendable { var data = Data() }
        let errorText = Collected(), done = DispatchSemaphore(value: 0)
        Thread { errorText.data = errors.fileHandleForReading.readDataToEndOfFile(); done.signal() }.start()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        done.wait()
        status = process.terminationStatus
        self.output = String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        self.errors = String(decoding: errorText.data, as: UTF8.self)
    }
}

/// Runs blocking work (a process to its end, a blocking read) on a new thread and resumes with its result, so that
/// waiting for it never holds one of Swift's cooperative threads.
public func offCooperativeThreads<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A helper started once for the whole test run (`start` runs on a thread of its own, the first time a test asks): a
/// test that needs it awaits it, so no cooperative thread blocks while Python starts a server (seconds on a loaded
/// machine) — a blocked cooperative thread stalls every other test of the process, and the in-process services they
/// talk to, as long as it waits.
public final class StartedOnce<Value: Sendable>: Sendable {
    private let start: @Sendable () -> Value
    private let task = Mutex<Task<Value, Never>?>(nil)

    public init(_ start: @escaping @Sendable () -> Value) {
        self.start = start
    }

    /// The helper, started by the first caller; later callers wait for that start.
    public var value: Value {
        get async {
            let start = self.start
            let running = task.withLock { task in
                if let task { return task }
                let started = Task { await withCheckedContinuation { continuation in Thread { continuation.resume(returning: start()) }.start() } }
                task = started
                return started
            }
            return await running.value
        }
    }
}

extension StartedOnce {
    /// Whether tests that need this helper should run: always in CI (`CI=true`, where a helper that cannot start is a
    /// failure of the tests that need it); elsewhere only when it starts, saying what is missing when it does not.
    public func shouldRun<Helper, Failure>(skipping tests: String) async -> Bool where Value == Result<Helper, Failure> {
        if ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        if case .failure(let reason) = await value {
            print("skipping \(tests): \(reason)")
            return false
        }
        return true
    }
}

public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

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
    static func start<Announcement: Decodable>(
        _ script: String, arguments: [String] = [], log: URL?,
        announcing: Announcement.Type
    ) -> Result<(HelperScript, Announcement), Failure> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Repository.supportScript(script).path] + arguments
        // Loopback never goes through a proxy the machine may name.
        var environment = ProcessInfo.processInfo.environment
        environment["NO_PROXY"] = "127.0.0.1,localhost"
        environment["no_proxy"] = "127.0.0.1,localhost"
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
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
        guard let line = helper.readLine(within: startLimit),
            let announcement = try? JSONDecoder().decode(Announcement.self, from: Data(line.utf8))
        else {
            // SIGKILL, to it and what it started: the test process ignores SIGTERM, and its children inherit that.
            if process.isRunning {
                kill(-process.processIdentifier, SIGKILL)
                kill(process.processIdentifier, SIGKILL)
            }
            _ = process.waitForEnd()
            let detail = log.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
            return .failure(.notStarted(String(detail.suffix(400))))
        }
        return .success((helper, announcement))
    }

    /// How long a helper may take to announce itself (a first start of moto or PostgreSQL on a loaded machine takes
    /// seconds).
    static let startLimit = 120.0

    /// The helper's next line of output (without its end).
    func readLine() -> String {
        var line = Data()
        while let byte = try? output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
            line.append(first)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// The helper's next line of output, or `nil` when none came within `seconds` (or its output ended first).
    func readLine(within seconds: Double) -> String? {
        let descriptor = output.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(seconds)
        var line = Data()
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 1) * 1000))
            if ready < 0 && errno != EINTR { return nil }
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let count = read(descriptor, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }
}

/// A command run to its end, as the tests' referees run them (`/usr/bin/env` finds it): its exit status and output.
/// Its output and errors go to files (no pipe to fill and stall it, none whose end a stray copy can hold back).
/// From async code use `ToolRun.run`, which waits on a thread of its own: a test that blocks one of Swift's
/// cooperative threads (two on a 2-core machine) stalls every other test of the process meanwhile.
public struct ToolRun: Sendable {
    public let status: Int32
    /// Standard output as text (trimmed unless the run was asked not to be), decoded when asked for: a referee's output
    /// is often binary (PCM), and decoding that as UTF-8 throws and catches inside the standard library at every bad
    /// byte, where Swift Testing records a backtrace for each throw (most of a test's time, once).
    public var output: String {
        let text = String(decoding: data, as: UTF8.self)
        return trimmed ? text.trimmingCharacters(in: .whitespacesAndNewlines) : text
    }
    public let errors: String
    /// Standard output as it was written.
    public let data: Data
    private let trimmed: Bool

    /// Runs `arguments` on a thread of its own and resumes when it has ended; one still running after `limit` seconds
    /// is killed (with what it started) and its run ends with status 137 (128 + SIGKILL).
    public static func run(_ arguments: [String], limit: Double = 600) async throws -> ToolRun {
        try await offCooperativeThreads { try ToolRun(arguments, limit: limit) }
    }

    init(_ arguments: [String], limit: Double = 600) throws {
        try self.init(arguments, executable: URL(fileURLWithPath: "/usr/bin/env"), limit: limit)
    }

    /// Runs `executable` with `arguments` (in `directory`, with `environment`) to its end, blocking.
    ///
    /// The child is spawned here (`posix_spawn`) and reaped here alone (`waitpid` on its id): with Foundation's
    /// `Process` two reapers raced for it, and when Foundation's monitor won, its record of the end could come seconds
    /// late on a loaded machine (a `psql` that had succeeded was once reported failed under AddressSanitizer).
    public init(
        _ arguments: [String], executable: URL, directory: URL? = nil, environment: [String: String]? = nil,
        limit: Double = 600, trimmed: Bool = true
    ) throws {
        // Output goes to files, not pipes: a child spawned meanwhile by another thread inherits every descriptor open
        // at that moment, and one that lived on holding a pipe's write end would keep a reader from its end of file
        // for ever. A file's end is where the tool stopped writing.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-tool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputFile = folder.appendingPathComponent("out")
        let errorFile = folder.appendingPathComponent("err")
        let pid = try Self.spawn(
            executable.path, arguments, directory: directory?.path,
            environment: environment ?? ProcessInfo.processInfo.environment,
            output: outputFile.path, errors: errorFile.path)
        // Past `limit`, the child and what it started (its process group) are killed.
        let watchdog = DispatchWorkItem {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: watchdog)
        var code: Int32 = 0
        while waitpid(pid, &code, 0) == -1 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECHILD) }
        }
        watchdog.cancel()
        let signal = code & 0x7F
        status = signal == 0 ? (code >> 8) & 0xFF : 128 + signal
        data = (try? Data(contentsOf: outputFile)) ?? Data()
        self.trimmed = trimmed
        self.errors = String(decoding: (try? Data(contentsOf: errorFile)) ?? Data(), as: UTF8.self)
    }

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), which Swift's Glibc module does not declare.
    private static let addChangeDirectory: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else {
            fatalError("glibc without posix_spawn_file_actions_addchdir_np (2.29 or later is needed)")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32).self)
    }()

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), likewise undeclared.
    private static let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("glibc without posix_spawn_file_actions_addclosefrom_np (2.34 or later is needed)")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Starts `path` in a process group of its own, standard input from /dev/null, output and errors into the files
    /// named, no other descriptor of this process's, signals as a fresh process has them; returns its id.
    private static func spawn(
        _ path: String, _ arguments: [String], directory: String?, environment: [String: String],
        output: String, errors: String
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let mode = mode_t(0o600)
        let writing = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, writing, mode)
        posix_spawn_file_actions_addopen(&actions, 2, errors, writing, mode)
        if let directory {
            guard addChangeDirectory(&actions, directory) == 0 else { throw POSIXError(.ENOENT) }
        }
        // Nothing else of this process's is inherited: a descriptor without close-on-exec (a service's accepted
        // connection) held by a tool that runs on would keep that connection open after the service closed it — as
        // Foundation's Process, which closes them too.
        guard addCloseFrom(&actions, 3) == 0 else { throw POSIXError(.EINVAL) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw CocoaError(
                .executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(path) could not be started: \(String(cString: strerror(result)))"])
        }
        return pid
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

/// The ends of the children this process reaped itself (Foundation then never learns them).
private let reapedEnds = Mutex<[pid_t: ProcessEnd]>([:])

/// How a child process ended: its exit status, or the signal that ended it.
public struct ProcessEnd: Sendable, Equatable {
    public var status: Int32
    public var signaled: Bool

    public static func exited(_ status: Int32) -> ProcessEnd { ProcessEnd(status: status, signaled: false) }
}

extension Process {
    /// Blocks until the process has ended and says how, reaping it itself (`waitpid`) rather than relying on
    /// Foundation's child monitor alone: on Linux that monitor missed children ending while many were started at once,
    /// leaving `waitUntilExit` waiting for ever (26 such waits stopped the CLI tests in CI).
    public func waitForEnd() -> ProcessEnd {
        // When Foundation reaped it, its record of the end comes when its monitor thread gets to it (seconds, on a
        // loaded machine): waited for, never guessed.
        var pause: UInt32 = 1_000
        while true {
            if let end = endIfEnded() { return end }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// How the process ended, if it has (without waiting); reaps it if Foundation has not.
    public func endIfEnded() -> ProcessEnd? {
        let pid = processIdentifier
        if let end = reapedEnds.withLock({ $0[pid] }) { return end }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid {
            let signal = status & 0x7F
            let end = signal == 0 ? ProcessEnd.exited((status >> 8) & 0xFF) : ProcessEnd(status: signal, signaled: true)
            reapedEnds.withLock { $0[pid] = end }
            return end
        }
        // Foundation reaped it: its own record says how it ended, once it has made it.
        if result == -1 && errno == ECHILD && !isRunning {
            return ProcessEnd(status: terminationStatus, signaled: terminationReason == .uncaughtSignal)
        }
        return nil
    }

    /// `waitForEnd` on a thread of its own (never one of Swift's cooperative threads).
    @discardableResult
    public func ended() async -> ProcessEnd {
        (try? await offCooperativeThreads { self.waitForEnd() }) ?? ProcessEnd(status: -1, signaled: false)
    }
}

public import Foundation

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
        var folder = URL(fileURLWithPath: #filePath)
        folder.deleteLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", folder.appendingPathComponent(script).path] + arguments
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        if let log {
            FileManager.default.createFile(atPath: log.path, contents: nil)
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
struct ToolRun {
    let status: Int32
    let output: String
    let errors: String

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

package import CONNXRuntime
import ChorusSupport
import Foundation

/// The process's ONNX Runtime, Chorus's one owner of it: the C API table (asked for the API version Chorus's header
/// declares), one environment with the process's shared pool of compute threads (one per core, sleeping when idle),
/// the CPU memory description every tensor uses, and the one place where the runtime's status codes become errors
/// (`check`). Whisper and the Piper voices run their networks through sessions made from it (`InferenceSession`).
///
/// The library is PyPI's `onnxruntime` wheel's, the header fastkokoro's (both pinned by `scripts/setup-speech.sh`).
/// A runtime serves every API version up to its own: one older than the header's is refused with an error naming both.
package final class ONNXRuntime: @unchecked Sendable {
    package let api: UnsafePointer<OrtApi>
    /// The runtime's version (`1.32.0`).
    package let version: String
    /// The API version asked for (the header's `ORT_API_VERSION`).
    package let apiVersion: Int
    package let environment: OpaquePointer
    /// Tensors in ordinary CPU memory (Chorus's own buffers and the runtime's outputs).
    package let memory: OpaquePointer
    /// The runtime's default allocator (names of inputs and outputs come from it and go back to it); never freed.
    package let allocator: UnsafeMutablePointer<OrtAllocator>

    /// Threads of the shared pool: one per core (the calling thread of a run is one of its workers).
    package static var sharedThreads: Int { ThreadBudget().inference }

    /// The runtime, made on first use; the same error every time when it cannot be.
    package static func shared() throws -> ONNXRuntime { try loaded.get() }

    private static let loaded: Result<ONNXRuntime, InferenceError> = {
        do { return .success(try ONNXRuntime()) } catch let error as InferenceError { return .failure(error) } catch {
            return .failure(InferenceError(.runtime, owner: "onnxruntime", message: "\(error)"))
        }
    }()

    private init() throws {
        guard let base = OrtGetApiBase() else {
            throw InferenceError(.runtime, owner: "onnxruntime", message: "the ONNX Runtime library gave no API (run scripts/setup.sh)")
        }
        version = base.pointee.GetVersionString().map { String(cString: $0) } ?? "unknown"
        apiVersion = Int(chorus_ort_api_version())
        guard let api = base.pointee.GetApi(UInt32(apiVersion)) else {
            throw InferenceError(
                .runtime, owner: "onnxruntime",
                message: "ONNX Runtime \(version) does not serve API version \(apiVersion), which Chorus was built with (run scripts/setup.sh)")
        }
        self.api = api
        // One pool of compute threads for the sessions that share it (`InferenceSession.Threads.shared`): a network run
        // alone spreads its operators over every core, runs at once share them.
        var threading: OpaquePointer?
        try Self.check(api, api.pointee.CreateThreadingOptions(&threading), "threading options", kind: .runtime)
        defer { api.pointee.ReleaseThreadingOptions(threading) }
        try Self.check(api, api.pointee.SetGlobalIntraOpNumThreads(threading, Int32(Self.sharedThreads)), "shared threads", kind: .runtime)
        try Self.check(api, api.pointee.SetGlobalInterOpNumThreads(threading, 1), "shared threads", kind: .runtime)
        try Self.check(api, api.pointee.SetGlobalSpinControl(threading, 0), "shared threads", kind: .runtime)
        var environment: OpaquePointer?
        // The pool's threads take the name of the thread that starts them: "onnx", for the process's account of them.
        let started = ThreadBudget.naming(
            threadsStartedBy: { api.pointee.CreateEnvWithGlobalThreadPools(ORT_LOGGING_LEVEL_ERROR, "chorus", threading, &environment) },
            as: "onnx")
        try Self.check(api, started, "starting ONNX Runtime", kind: .runtime)
        var memory: OpaquePointer?
        do {
            try Self.check(
                api, api.pointee.CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &memory), "describing CPU memory", kind: .runtime)
        } catch {
            api.pointee.ReleaseEnv(environment)
            throw error
        }
        var allocator: UnsafeMutablePointer<OrtAllocator>?
        try Self.check(api, api.pointee.GetAllocatorWithDefaultOptions(&allocator), "the default allocator", kind: .runtime)
        guard let environment, let memory, let allocator else {
            throw InferenceError(.runtime, owner: "onnxruntime", message: "ONNX Runtime gave no environment")
        }
        self.environment = environment
        self.memory = memory
        self.allocator = allocator
    }

    deinit {
        api.pointee.ReleaseMemoryInfo(memory)
        api.pointee.ReleaseEnv(environment)
    }

    /// Throws when `status` is an error (and frees it): an `InferenceError` of `kind` for `owner` saying `what` failed
    /// and the runtime's reason. The one place the runtime's statuses are read.
    package func check(
        _ status: OpaquePointer?, _ what: @autoclosure () -> String, kind: InferenceError.Kind = .run,
        owner: String
    ) throws {
        try Self.check(api, status, what(), kind: kind, owner: owner)
    }

    private static func check(
        _ api: UnsafePointer<OrtApi>, _ status: OpaquePointer?, _ what: @autoclosure () -> String,
        kind: InferenceError.Kind, owner: String = "onnxruntime"
    ) throws {
        guard let status else { return }
        defer { api.pointee.ReleaseStatus(status) }
        let reason = api.pointee.GetErrorMessage(status).map { String(cString: $0) } ?? "no reason given"
        throw InferenceError(kind, owner: owner, message: "\(what()): \(reason)")
    }
}

package import CONNXRuntime
package import Foundation

/// One network loaded into ONNX Runtime, the one owner of its session: made from a model file's bytes (the same
/// bytes Chorus checked: `ONNXModelFile`), released with this. `run` may be called from several threads at once (the
/// runtime's sessions allow it); each call gets outputs of its own.
package final class InferenceSession: @unchecked Sendable {
    /// The file it was loaded from (errors name it).
    package let file: URL
    /// Who the network runs for (`whisper`, `piper`), which its errors name.
    package let owner: String
    package let inputs: [Port]
    package let outputs: [Port]
    private let runtime: ONNXRuntime
    private let handle: OpaquePointer

    /// An input or output: its name, element type and shape (-1 where it varies).
    package struct Port: Sendable, Equatable, CustomStringConvertible {
        package var name: String
        package var element: ONNXTensorElementDataType
        package var shape: [Int]

        package var description: String {
            "\(name) \(TensorElementName.of(element))[\(shape.map { $0 < 0 ? "?" : String($0) }.joined(separator: ", "))]"
        }
    }

    /// The threads a session's runs use.
    package enum Threads: Sendable {
        /// `count` of its own per run (1: the calling thread alone).
        case own(Int)
        /// The process's shared pool (`ONNXRuntime.sharedThreads`): a run alone uses every core, runs at once share them.
        case shared
    }

    /// Loads `bytes` (the model file `file`).
    /// - Parameters:
    ///   - threads: The runtime's threads for one call.
    ///   - owner: Who the network runs for, which its errors name.
    /// - Throws: `InferenceError` (`.model`) naming the file when the runtime refuses it.
    package init(file: URL, bytes: Data, threads: Threads, owner: String) throws {
        let runtime = try ONNXRuntime.shared()
        let api = runtime.api.pointee
        self.runtime = runtime
        self.file = file
        self.owner = owner
        var options: OpaquePointer?
        try runtime.check(api.CreateSessionOptions(&options), "\(file.path): session options", kind: .model, owner: owner)
        defer { api.ReleaseSessionOptions(options) }
        func set(_ status: OpaquePointer?, _ what: String) throws {
            try runtime.check(status, "\(file.path): \(what)", kind: .model, owner: owner)
        }
        switch threads {
        case .own(let count):
            try set(api.SetIntraOpNumThreads(options, Int32(max(1, count))), "intra-op threads")
            try set(api.SetInterOpNumThreads(options, 1), "inter-op threads")
        case .shared:
            try set(api.DisablePerSessionThreads(options), "shared threads")
        }
        try set(api.SetSessionExecutionMode(options, ORT_SEQUENTIAL), "execution mode")
        try set(api.SetSessionGraphOptimizationLevel(options, ORT_ENABLE_ALL), "optimization level")
        // Threads that wait for work sleep instead of spinning: lanes share the cores with each other and the encoders.
        try set(api.AddSessionConfigEntry(options, "session.intra_op.allow_spinning", "0"), "spinning")
        // int8 products exact on every x86 processor: without VNNI (AVX2 only), ONNX Runtime's fastest int8 kernel adds
        // each pair of unsigned × signed byte products in 16 bits and saturates past 32,767, which cost Whisper tiny.en
        // words on such a host (364 of the human corpus's 3,589 wrong instead of 300). In this mode the runtime stores the
        // signed weights that could saturate as unsigned, for a kernel that cannot, only where the fast one can (a VNNI
        // processor's is exact already).
        try set(api.AddSessionConfigEntry(options, "session.x64quantprecision", "1"), "exact int8 products")
        var session: OpaquePointer?
        try bytes.withUnsafeBytes { raw in
            try runtime.check(
                api.CreateSessionFromArray(runtime.environment, raw.baseAddress, raw.count, options, &session),
                "\(file.path): ONNX Runtime \(runtime.version) cannot load it", kind: .model, owner: owner)
        }
        guard let session else { throw InferenceError(.model, owner: owner, message: "\(file.path): no session") }
        handle = session
        do {
            inputs = try Self.ports(of: session, runtime: runtime, inputs: true, file: file, owner: owner)
            outputs = try Self.ports(of: session, runtime: runtime, inputs: false, file: file, owner: owner)
        } catch {
            api.ReleaseSession(session)
            throw error
        }
    }

    deinit { runtime.api.pointee.ReleaseSession(handle) }

    /// Throws unless the session's inputs and outputs are `inputs` and `outputs` (names, element types, ranks; a fixed
    /// size in `shape` must match too; -1 matches any).
    /// - Throws: `InferenceError` (`.model`) naming the file and what differs.
    package func expect(inputs expectedInputs: [Port], outputs expectedOutputs: [Port]) throws {
        for (kind, found, expected) in [("inputs", inputs, expectedInputs), ("outputs", outputs, expectedOutputs)] {
            let matches =
                found.count == expected.count
                && zip(found, expected).allSatisfy { port, wanted in
                    port.name == wanted.name && port.element == wanted.element && port.shape.count == wanted.shape.count
                        && zip(port.shape, wanted.shape).allSatisfy { $1 < 0 || $0 < 0 || $0 == $1 }
                }
            guard matches else {
                throw InferenceError(
                    .model, owner: owner,
                    message:
                        "\(file.path): its \(kind) are \(found.map(\.description).joined(separator: ", ")); expected \(expected.map(\.description).joined(separator: ", "))"
                )
            }
        }
    }

    /// Runs the network on `feeds` (each a value named for an input) and returns the outputs named `names`, in order.
    /// - Throws: `InferenceError` (`.run`) naming the file and the runtime's reason.
    package func run(_ feeds: [(name: String, value: any TensorValue)], outputs names: [String]) throws -> [OutputTensor] {
        let api = runtime.api.pointee
        var results = [OpaquePointer?](repeating: nil, count: names.count)
        let inputNames = feeds.map { strdup($0.name) }
        let outputNames = names.map { strdup($0) }
        defer {
            inputNames.forEach { free($0) }
            outputNames.forEach { free($0) }
        }
        let values: [OpaquePointer?] = feeds.map { $0.value.value }
        try withExtendedLifetime(feeds) {
            let status = inputNames.map { UnsafePointer($0) }.withUnsafeBufferPointer { inputNamePointers in
                outputNames.map { UnsafePointer($0) }.withUnsafeBufferPointer { outputNamePointers in
                    values.withUnsafeBufferPointer { valuePointers in
                        results.withUnsafeMutableBufferPointer { resultPointers in
                            api.Run(
                                handle, nil, inputNamePointers.baseAddress, valuePointers.baseAddress, feeds.count,
                                outputNamePointers.baseAddress, names.count, resultPointers.baseAddress)
                        }
                    }
                }
            }
            if let status {
                for case let result? in results { api.ReleaseValue(result) }
                try runtime.check(status, "\(file.lastPathComponent): running the network", owner: owner)
            }
        }
        var outputs: [OutputTensor] = []
        for result in results {
            guard let result else {
                throw InferenceError(.run, owner: owner, message: "\(file.lastPathComponent): the network gave no output")
            }
            outputs.append(try OutputTensor(owning: result, runtime: runtime, owner: owner))
        }
        return outputs
    }

    private static func ports(of session: OpaquePointer, runtime: ONNXRuntime, inputs: Bool, file: URL, owner: String) throws -> [Port] {
        let api = runtime.api.pointee
        func check(_ status: OpaquePointer?, _ what: String) throws {
            try runtime.check(status, "\(file.path): \(what)", kind: .model, owner: owner)
        }
        var count = 0
        try check(inputs ? api.SessionGetInputCount(session, &count) : api.SessionGetOutputCount(session, &count), "counting ports")
        return try (0..<count).map { index in
            var name: UnsafeMutablePointer<CChar>?
            try check(
                inputs
                    ? api.SessionGetInputName(session, index, runtime.allocator, &name)
                    : api.SessionGetOutputName(session, index, runtime.allocator, &name), "port \(index)'s name")
            let text = name.map { String(cString: $0) } ?? ""
            if let name { _ = api.AllocatorFree(runtime.allocator, name) }
            var info: OpaquePointer?
            try check(
                inputs ? api.SessionGetInputTypeInfo(session, index, &info) : api.SessionGetOutputTypeInfo(session, index, &info),
                "\(text)'s type")
            defer { api.ReleaseTypeInfo(info) }
            var tensor: OpaquePointer?
            try check(api.CastTypeInfoToTensorInfo(info, &tensor), "\(text)'s tensor type")
            guard let tensor else {
                throw InferenceError(.model, owner: owner, message: "\(file.path): \(text) is not a tensor")
            }
            return Port(
                name: text, element: try TensorShape.element(of: tensor, runtime: runtime, owner: owner),
                shape: try TensorShape.dimensions(of: tensor, runtime: runtime, owner: owner))
        }
    }
}

/// The one error type of the inference layer: a model file that cannot be used, a runtime that cannot start, a network
/// that failed to run. Its message names the file and the reason; the layers above say it in their own error
/// (`VoiceError(_:provider:)`).
///
/// ```swift
/// do { _ = try ONNXModelFile(url: url) }
/// catch let error as InferenceError { print(error) }   // "/models/x.onnx: 12 bytes, not an ONNX model"
/// ```
public struct InferenceError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: String, Sendable {
        /// A model file missing, unreadable, not ONNX, not the network expected, or refused by the runtime.
        case model
        /// ONNX Runtime missing, too old for Chorus, or unable to start.
        case runtime
        /// A loaded network failed to run (or to describe its outputs).
        case run
    }

    public var kind: Kind
    /// Who the network runs for (`whisper`, `piper`: the session's `owner`), `onnxruntime` for the runtime itself; empty
    /// for a model file read before any session.
    public var owner: String
    public var message: String

    public init(_ kind: Kind, owner: String = "", message: String) {
        self.kind = kind
        self.owner = owner
        self.message = message
    }

    /// A model file that cannot be used.
    package static func model(_ message: String, owner: String = "") -> InferenceError { InferenceError(.model, owner: owner, message: message) }

    public var description: String { owner.isEmpty ? message : "\(owner): \(message)" }
}

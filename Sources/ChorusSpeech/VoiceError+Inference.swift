package import ChorusInference

extension VoiceError {
    /// An inference failure said as a voice's: a model file or runtime that cannot be used is `.configuration`, a
    /// network that failed to run `.unavailable` (tried again, as a provider's server error is); in the same words, for
    /// the network's owner (`whisper`, `piper`), else `provider`.
    package init(_ error: InferenceError, provider: String) {
        let kind: Kind
        switch error.kind {
        case .model, .runtime: kind = .configuration
        case .run: kind = .unavailable
        }
        self.init(kind, provider: error.owner.isEmpty ? provider : error.owner, message: error.message)
    }

    /// `body`, its `InferenceError`s said as `VoiceError`s for `provider` (`init(_:provider:)`): the one conversion, at
    /// the types that own a network (a voice's synthesizer, Whisper's networks and decoder) and the checks of model files.
    package static func inference<T>(_ provider: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as InferenceError {
            throw VoiceError(error, provider: provider)
        }
    }
}

import CSndFile

/// The one place libsndfile's failures become `AudioError`s.
enum SndFile {
    /// Throws `writeFailed` naming `operation` when `succeeded` is false, with libsndfile's message for `handle`.
    static func check(_ succeeded: Bool, _ operation: String, handle: OpaquePointer?, subject: String, reason: String) throws {
        guard !succeeded else { return }
        throw AudioError(
            .writeFailed, subject: subject, reason: reason,
            underlying: "\(operation): " + String(cString: sf_strerror(handle)))
    }
}

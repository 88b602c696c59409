import CLame

/// The one place LAME's return codes become `AudioError`s.
enum LAME {
    /// Throws `encodingFailed` naming `operation` when `code` is negative; returns it otherwise.
    @discardableResult
    static func check(_ code: Int32, _ operation: String, subject: String, reason: String? = nil) throws -> Int32 {
        guard code < 0 else { return code }
        throw AudioError(.encodingFailed, subject: subject, reason: reason ?? "LAME: \(operation) failed", underlying: message(code))
    }

    /// LAME's documented meanings of its negative return codes.
    static func message(_ code: Int32) -> String {
        switch code {
        case -1: return "\(code): output buffer too small or bad setting"
        case -2: return "\(code): out of memory"
        case -3: return "\(code): lame_init_params was not called"
        case -4: return "\(code): psychoacoustic problem"
        default: return "code \(code)"
        }
    }
}

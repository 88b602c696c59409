import CFFmpeg

/// The one place FFmpeg return codes become `AudioError`s.
enum FFmpeg {
    static let endOfFile = chorus_averror_eof()
    static let tryAgain = chorus_averror(EAGAIN)
    static let outOfMemory = chorus_averror(ENOMEM)
    static let noTimestamp = chorus_nopts_value()

    /// FFmpeg's message for an error code (`av_strerror`).
    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if av_strerror(code, &buffer, buffer.count) < 0 { return "error \(code)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Throws an `AudioError` when `code` is negative; returns it otherwise.
    @discardableResult
    static func check(
        _ code: Int32, _ operation: String, subject: String, reason: String? = nil,
        as errorCode: AudioError.Code = .corrupt
    ) throws -> Int32 {
        guard code < 0 else { return code }
        throw AudioError(errorCode, subject: subject, reason: reason ?? "\(operation) failed", underlying: message(code))
    }

    /// Keeps libav* quiet on stderr: every failure reaches the caller as an `AudioError` instead.
    /// FFmpeg's process-wide settings, applied once before its first use: no log output (its errors reach
    /// callers through `check`), and no single allocation above `maxAllocation` — a header may declare anything
    /// (found by fuzzing: a WAV whose LIST chunk claimed 2.6 GB made the demuxer take 1.9 GB of memory
    /// before failing), while no real stream needs one block that large.
    static let setUp: Void = {
        av_log_set_level(AV_LOG_QUIET)
        av_max_alloc(maxAllocation)
    }()
    static let maxAllocation = 64 << 20

    static func channelLayout(channels: Int) -> AVChannelLayout {
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(channels))
        return layout
    }
}

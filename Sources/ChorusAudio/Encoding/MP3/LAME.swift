import CLame

/// The one place LAME's return codes become `AudioError`s, and the one place its settings are made.
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

    /// A LAME encoder with Chorus's settings: CBR at `bitRate` (or VBR "new" for fixtures), joint stereo,
    /// no resampling. The caller owns it and closes it with `lame_close`.
    static func makeEncoder(
        format: AudioFormat, bitRate: Int, quality: Int, vbr: Bool, writeTag: Bool,
        subject: String
    ) throws -> OpaquePointer {
        guard let flags = lame_init() else {
            throw AudioError(.encodingFailed, subject: subject, reason: "cannot start the LAME encoder")
        }
        do {
            let rejected = "LAME rejects \(format) at \(bitRate / 1000) kbit/s"
            try check(lame_set_in_samplerate(flags, Int32(format.sampleRate)), "lame_set_in_samplerate", subject: subject, reason: rejected)
            try check(lame_set_out_samplerate(flags, Int32(format.sampleRate)), "lame_set_out_samplerate", subject: subject, reason: rejected)
            try check(lame_set_num_channels(flags, Int32(format.channels)), "lame_set_num_channels", subject: subject, reason: rejected)
            try check(lame_set_mode(flags, format.channels == 1 ? MONO : JOINT_STEREO), "lame_set_mode", subject: subject)
            try check(lame_set_quality(flags, Int32(min(9, max(0, quality)))), "lame_set_quality", subject: subject)
            if vbr {
                try check(lame_set_VBR(flags, vbr_default), "lame_set_VBR", subject: subject)
                try check(lame_set_VBR_quality(flags, 4), "lame_set_VBR_quality", subject: subject)
            } else {
                try check(lame_set_VBR(flags, vbr_off), "lame_set_VBR", subject: subject)
                try check(lame_set_brate(flags, Int32(bitRate / 1000)), "lame_set_brate", subject: subject, reason: rejected)
            }
            try check(lame_set_bWriteVbrTag(flags, writeTag ? 1 : 0), "lame_set_bWriteVbrTag", subject: subject)
            try check(lame_init_params(flags), "lame_init_params", subject: subject, reason: rejected)
            return flags
        } catch {
            lame_close(flags)
            throw error
        }
    }

    /// Size of the LAME/Xing tag frame LAME writes first: one frame at the CBR bit rate (for VBR,
    /// LAME's fixed 128/64/32 kbit/s for MPEG-1/2/2.5), `(version + 1) × 72000 × kbps / rate` bytes,
    /// without padding; 0 when that frame could not hold the tag (LAME then writes none).
    static func tagFrameBytes(_ flags: OpaquePointer, vbr: Bool) -> Int {
        let version = Int(lame_get_version(flags))  // 1: MPEG-1, 0: MPEG-2 and 2.5
        let rate = Int(lame_get_out_samplerate(flags))
        let kbps = vbr ? (version == 1 ? 128 : rate < 16_000 ? 32 : 64) : Int(lame_get_brate(flags))
        let size = (version + 1) * 72_000 * kbps / rate
        let mono = lame_get_num_channels(flags) == 1
        let sideInformation = version == 1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        let smallest = 4 + sideInformation + 156  // frame header + side information + the Xing/LAME tag
        return (smallest...2880).contains(size) ? size : 0
    }

    /// Encodes interleaved frames 8,192 at a time, handing each piece of output to `emit` (bytes, count).
    static func encode(
        _ flags: OpaquePointer, _ samples: UnsafeBufferPointer<Float>, channels: Int, buffer: inout [UInt8],
        subject: String, emit: ([UInt8], Int) throws -> Void
    ) throws {
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        let chunk = 8192
        var offset = 0
        let frames = samples.count / channels
        while offset < frames {
            let count = min(chunk, frames - offset)
            let needed = count * 5 / 4 + 7200
            if buffer.count < needed { buffer = [UInt8](repeating: 0, count: needed) }
            let start = base + offset * channels
            let produced = buffer.withUnsafeMutableBufferPointer { output -> Int32 in
                if channels == 1 {
                    return lame_encode_buffer_ieee_float(flags, start, start, Int32(count), output.baseAddress, Int32(output.count))
                }
                return lame_encode_buffer_interleaved_ieee_float(flags, start, Int32(count), output.baseAddress, Int32(output.count))
            }
            try check(produced, "lame_encode_buffer", subject: subject, reason: "LAME failed to encode")
            try emit(buffer, Int(produced))
            offset += count
        }
    }

    /// Flushes the encoder (its last frames, padded with silence) into `emit`.
    static func flush(_ flags: OpaquePointer, buffer: inout [UInt8], subject: String, emit: ([UInt8], Int) throws -> Void) throws {
        if buffer.count < 7200 { buffer = [UInt8](repeating: 0, count: 7200) }
        let flushed = buffer.withUnsafeMutableBufferPointer { lame_encode_flush(flags, $0.baseAddress, Int32($0.count)) }
        try check(flushed, "lame_encode_flush", subject: subject, reason: "LAME failed to flush")
        try emit(buffer, Int(flushed))
    }

    /// LAME's finished tag frame (call after the flush); empty when it has none.
    static func tagFrame(_ flags: OpaquePointer) -> [UInt8] {
        var frame = [UInt8](repeating: 0, count: 2880)
        let size = frame.withUnsafeMutableBufferPointer { lame_get_lametag_frame(flags, $0.baseAddress, $0.count) }
        return size <= frame.count ? Array(frame.prefix(size)) : []
    }
}

import CLame
import Foundation

/// MP3 through LAME: CBR by default, with the LAME/Xing ("Info") tag written into the first frame
/// after the flush, so decoders drop encoder delay and padding and the decoded length is exact.
///
/// One owner of the `lame_global_flags` (`deinit` closes it).
final class MP3Encoder: AudioEncoder {
    let format: AudioFormat
    private var lame: OpaquePointer?
    private let file: BinaryFile
    private var buffer: [UInt8]
    private let writeTag: Bool
    private var finished = false

    /// - Parameters:
    ///   - vbr: variable bit rate (VBR "new", quality from `quality`); for test fixtures.
    ///   - writeTag: write the LAME/Xing tag (disable only to produce a tagless fixture).
    init(url: URL, format: AudioFormat, bitRate: Int, quality: Int = 3, vbr: Bool = false, writeTag: Bool = true) throws {
        self.format = format
        self.writeTag = writeTag
        guard let flags = lame_init() else {
            throw AudioError(.encodingFailed, subject: url.path, reason: "cannot start the LAME encoder")
        }
        lame = flags
        lame_set_in_samplerate(flags, Int32(format.sampleRate))
        lame_set_out_samplerate(flags, Int32(format.sampleRate))
        lame_set_num_channels(flags, Int32(format.channels))
        lame_set_mode(flags, format.channels == 1 ? MONO : JOINT_STEREO)
        lame_set_quality(flags, Int32(min(9, max(0, quality))))
        if vbr {
            lame_set_VBR(flags, vbr_default)
            lame_set_VBR_quality(flags, 4)
        } else {
            lame_set_VBR(flags, vbr_off)
            lame_set_brate(flags, Int32(bitRate / 1000))
        }
        lame_set_bWriteVbrTag(flags, writeTag ? 1 : 0)
        guard lame_init_params(flags) >= 0 else {
            lame_close(flags)
            lame = nil
            throw AudioError(.encodingFailed, subject: url.path,
                             reason: "LAME rejects \(format) at \(bitRate / 1000) kbit/s")
        }
        file = try BinaryFile(url: url)
        buffer = [UInt8](repeating: 0, count: 16 * 1024)
    }

    deinit { if lame != nil { lame_close(lame) } }

    func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        let chunk = 8192
        var offset = 0
        let frames = samples.count / format.channels
        while offset < frames {
            let count = min(chunk, frames - offset)
            let needed = count * 5 / 4 + 7200
            if buffer.count < needed { buffer = [UInt8](repeating: 0, count: needed) }
            let start = base + offset * format.channels
            let produced = buffer.withUnsafeMutableBufferPointer { output -> Int32 in
                if format.channels == 1 {
                    return lame_encode_buffer_ieee_float(lame, start, start, Int32(count), output.baseAddress, Int32(output.count))
                }
                return lame_encode_buffer_interleaved_ieee_float(lame, start, Int32(count), output.baseAddress, Int32(output.count))
            }
            guard produced >= 0 else {
                throw AudioError(.encodingFailed, subject: file.url.path, reason: "LAME failed to encode (code \(produced))")
            }
            try file.write(buffer, count: Int(produced))
            offset += count
        }
    }

    func finish() throws {
        guard !finished else { return }
        finished = true
        if buffer.count < 7200 { buffer = [UInt8](repeating: 0, count: 7200) }
        let flushed = buffer.withUnsafeMutableBufferPointer { lame_encode_flush(lame, $0.baseAddress, Int32($0.count)) }
        guard flushed >= 0 else {
            throw AudioError(.encodingFailed, subject: file.url.path, reason: "LAME failed to flush (code \(flushed))")
        }
        try file.write(buffer, count: Int(flushed))
        if writeTag {
            let size = buffer.withUnsafeMutableBufferPointer { lame_get_lametag_frame(lame, $0.baseAddress, $0.count) }
            if size > 0 && size <= buffer.count {
                try file.seek(to: 0)
                try file.write(buffer, count: size)
            }
        }
        try file.close()
    }
}

import CLame
import Foundation

/// MP3 through LAME: CBR by default, with the LAME/Xing ("Info") tag written into the first frame
/// after the flush, so decoders drop encoder delay and padding and the decoded length is exact.
///
/// LAME emits that first frame as a placeholder at the start and fills it in at the end; the
/// output is told, so a stream (which cannot go back) leaves it out. With chapters, an ID3v2 tag
/// (`ID3ChapterTag`) goes before that frame the same way: reserved at the start, rewritten with
/// the final times at the end, left out of a stream.
/// One owner of the `lame_global_flags` (`deinit` closes it).
package final class MP3Encoder: AudioEncoder {
    package let format: AudioFormat
    private var lame: OpaquePointer?
    private let output: EncodedOutput
    private var buffer: [UInt8]
    private let writeTag: Bool
    private let tagFrameBytes: Int
    private let chapterTag: ID3ChapterTag?
    private var finished = false

    /// - Parameters:
    ///   - vbr: variable bit rate (VBR "new", quality from `quality`); for test fixtures.
    ///   - writeTag: write the LAME/Xing tag (disable only to produce a tagless fixture).
    ///   - chapterTitles: chapters to mark in an ID3v2 tag; empty for no tag.
    package init(output: EncodedOutput, format: AudioFormat, bitRate: Int, quality: Int = RenderOptions.defaultMP3Quality,
                 vbr: Bool = false, writeTag: Bool = true, chapterTitles: [String] = []) throws {
        self.format = format
        self.output = output
        self.writeTag = writeTag
        let subject = output.subject
        guard let flags = lame_init() else {
            throw AudioError(.encodingFailed, subject: subject, reason: "cannot start the LAME encoder")
        }
        lame = flags
        let rejected = "LAME rejects \(format) at \(bitRate / 1000) kbit/s"
        try LAME.check(lame_set_in_samplerate(flags, Int32(format.sampleRate)), "lame_set_in_samplerate", subject: subject, reason: rejected)
        try LAME.check(lame_set_out_samplerate(flags, Int32(format.sampleRate)), "lame_set_out_samplerate", subject: subject, reason: rejected)
        try LAME.check(lame_set_num_channels(flags, Int32(format.channels)), "lame_set_num_channels", subject: subject, reason: rejected)
        try LAME.check(lame_set_mode(flags, format.channels == 1 ? MONO : JOINT_STEREO), "lame_set_mode", subject: subject)
        try LAME.check(lame_set_quality(flags, Int32(min(9, max(0, quality)))), "lame_set_quality", subject: subject)
        if vbr {
            try LAME.check(lame_set_VBR(flags, vbr_default), "lame_set_VBR", subject: subject)
            try LAME.check(lame_set_VBR_quality(flags, 4), "lame_set_VBR_quality", subject: subject)
        } else {
            try LAME.check(lame_set_VBR(flags, vbr_off), "lame_set_VBR", subject: subject)
            try LAME.check(lame_set_brate(flags, Int32(bitRate / 1000)), "lame_set_brate", subject: subject, reason: rejected)
        }
        try LAME.check(lame_set_bWriteVbrTag(flags, writeTag ? 1 : 0), "lame_set_bWriteVbrTag", subject: subject)
        try LAME.check(lame_init_params(flags), "lame_init_params", subject: subject, reason: rejected)
        tagFrameBytes = writeTag ? Self.tagFrameBytes(flags, vbr: vbr) : 0
        chapterTag = chapterTitles.isEmpty ? nil : try ID3ChapterTag(titles: chapterTitles)
        let chapterBytes = chapterTag?.size ?? 0
        output.reservePlaceholder(bytes: chapterBytes + tagFrameBytes)
        if let chapterTag {
            try output.append(chapterTag.bytes(milliseconds: Array(repeating: (0, 0), count: chapterTitles.count)),
                              count: chapterBytes)
        }
        buffer = [UInt8](repeating: 0, count: 16 * 1024)
    }

    deinit { if lame != nil { lame_close(lame) } }

    /// Size of the LAME/Xing tag frame LAME writes first: one frame at the CBR bit rate (for VBR,
    /// LAME's fixed 128/64/32 kbit/s for MPEG-1/2/2.5), `(version + 1) × 72000 × kbps / rate` bytes,
    /// without padding; 0 when that frame could not hold the tag (LAME then writes none).
    private static func tagFrameBytes(_ flags: OpaquePointer, vbr: Bool) -> Int {
        let version = Int(lame_get_version(flags))   // 1: MPEG-1, 0: MPEG-2 and 2.5
        let rate = Int(lame_get_out_samplerate(flags))
        let kbps = vbr ? (version == 1 ? 128 : rate < 16_000 ? 32 : 64) : Int(lame_get_brate(flags))
        let size = (version + 1) * 72_000 * kbps / rate
        let mono = lame_get_num_channels(flags) == 1
        let sideInformation = version == 1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        let smallest = 4 + sideInformation + 156   // frame header + side information + the Xing/LAME tag
        return (smallest...2880).contains(size) ? size : 0
    }

    package func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
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
            try LAME.check(produced, "lame_encode_buffer", subject: output.subject, reason: "LAME failed to encode")
            try output.append(buffer, count: Int(produced))
            offset += count
        }
    }

    package func finish(chapters: [ChapterMark]) throws {
        guard !finished else { return }
        finished = true
        if buffer.count < 7200 { buffer = [UInt8](repeating: 0, count: 7200) }
        let flushed = buffer.withUnsafeMutableBufferPointer { lame_encode_flush(lame, $0.baseAddress, Int32($0.count)) }
        try LAME.check(flushed, "lame_encode_flush", subject: output.subject, reason: "LAME failed to flush")
        try output.append(buffer, count: Int(flushed))
        if let chapterTag {
            let times = chapterTag.titles.indices.map { index -> (Int, Int) in
                guard index < chapters.count else { return (0, 0) }
                let frames = chapters[index].frames
                return (ChapterMark.milliseconds(frames: frames.lowerBound, sampleRate: format.sampleRate),
                        ChapterMark.milliseconds(frames: frames.upperBound, sampleRate: format.sampleRate))
            }
            try chapterTag.bytes(milliseconds: times).withUnsafeBytes { try output.overwrite($0, at: 0) }
        }
        if tagFrameBytes > 0 {
            let size = buffer.withUnsafeMutableBufferPointer { lame_get_lametag_frame(lame, $0.baseAddress, $0.count) }
            if size == 0 { return }   // no audio frames at all: LAME has no tag to write
            guard size == tagFrameBytes, size <= buffer.count else {
                throw AudioError(.encodingFailed, subject: output.subject,
                                 reason: "LAME's tag frame is \(size) bytes, not the \(tagFrameBytes) reserved for it")
            }
            try buffer.withUnsafeBytes {
                try output.overwrite(UnsafeRawBufferPointer(rebasing: $0.prefix(size)), at: chapterTag?.size ?? 0)
            }
        }
    }
}

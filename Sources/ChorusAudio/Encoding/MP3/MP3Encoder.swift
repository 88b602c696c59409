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
    ///   - growingTitles: how many of them `finish` may be given longer (the tag keeps room).
    package init(
        output: EncodedOutput, format: AudioFormat, bitRate: Int, quality: Int = RenderOptions.defaultMP3Quality,
        vbr: Bool = false, writeTag: Bool = true, chapterTitles: [String] = [], growingTitles: Int = 0
    ) throws {
        self.format = format
        self.output = output
        self.writeTag = writeTag
        let flags = try LAME.makeEncoder(
            format: format, bitRate: bitRate, quality: quality, vbr: vbr, writeTag: writeTag,
            subject: output.subject)
        lame = flags
        tagFrameBytes = writeTag ? LAME.tagFrameBytes(flags, vbr: vbr) : 0
        chapterTag = chapterTitles.isEmpty ? nil : try ID3ChapterTag(titles: chapterTitles, growing: growingTitles)
        output.reservePlaceholder(bytes: (chapterTag?.size ?? 0) + tagFrameBytes)
        try chapterTag?.writePlaceholder(into: output)
        buffer = [UInt8](repeating: 0, count: 16 * 1024)
    }

    deinit { if lame != nil { lame_close(lame) } }

    package func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
        guard let lame else { return }
        try LAME.encode(lame, samples, channels: format.channels, buffer: &buffer, subject: output.subject) { try output.append($0, count: $1) }
    }

    package func finish(chapters: [ChapterMark]) throws {
        guard !finished, let lame else { return }
        finished = true
        try LAME.flush(lame, buffer: &buffer, subject: output.subject) { try output.append($0, count: $1) }
        try chapterTag?.write(chapters: chapters, sampleRate: format.sampleRate, into: output)
        if tagFrameBytes > 0 {
            let frame = LAME.tagFrame(lame)
            if frame.isEmpty { return }  // no audio frames at all: LAME has no tag to write
            guard frame.count == tagFrameBytes else {
                throw AudioError(
                    .encodingFailed, subject: output.subject,
                    reason: "LAME's tag frame is \(frame.count) bytes, not the \(tagFrameBytes) reserved for it")
            }
            try frame.withUnsafeBytes { try output.overwrite($0, at: chapterTag?.size ?? 0) }
        }
    }
}

import Foundation

/// Encodes through libavcodec and muxes through libavformat: AAC in M4A and Opus in Ogg for
/// renders (test fixtures add their own codecs, such as ADTS AAC and Vorbis in Ogg, in `ChorusFixtures`).
///
/// The muxers record encoder delay (MP4 edit list, Ogg Opus pre-skip) and the true end (last
/// packet duration / granule position), so decoders yield exactly the samples written.
///
/// Chapters: MP4 takes them at the trailer (libavformat adds a chapter track and a `chpl` list);
/// Ogg writes them into its comment header, so the header goes out with zero times and is
/// rewritten at the end (`OggChapterTimes`); a stream, which cannot wait for the times, gets the
/// same header pages without the chapter comments.
package final class CodecEncoder: AudioEncoder {
    /// A libavformat muxer and the libavcodec encoders to try for it, in order.
    package struct Codec {
        var muxer: String
        var encoders: [String]
        var label: String

        package init(muxer: String, encoders: [String], label: String) {
            self.muxer = muxer
            self.encoders = encoders
            self.label = label
        }

        package static let aacInM4A = Codec(muxer: "ipod", encoders: ["aac"], label: "AAC")
        package static let opusInOgg = Codec(muxer: "ogg", encoders: ["libopus"], label: "Opus")
    }

    package let format: AudioFormat
    private let muxer: Muxer
    private let codec: AudioCodecContext
    private let chapterTitles: [String]
    /// Ogg: the header pages as first written, to rewrite with the chapter times.
    private var headerPages: [UInt8] = []
    private var finished = false

    package init(output: EncodedOutput, format: AudioFormat, codec: Codec, bitRate: Int, chapterTitles: [String] = []) throws {
        self.format = format
        let inHeader = codec.muxer == "ogg"
        // A streamed Ogg header leaves the chapters out, which needs the comment packet in one page
        // (≈ 500 chapters); a stream alone keeps nothing to rewrite.
        let streamable = output.keepsBytes && OggChapterTimes.commentBytes(titles: chapterTitles) < 60_000
        let chapterTitles = inHeader && output.isStreaming && !streamable ? [] : chapterTitles
        self.chapterTitles = chapterTitles
        let holdBack = inHeader && !chapterTitles.isEmpty && output.isStreaming
        muxer = try Muxer(output: output, name: codec.muxer)
        self.codec = try AudioCodecContext(
            codec: codec, format: format, bitRate: bitRate, globalHeader: muxer.wantsGlobalHeader,
            subject: output.subject)
        try muxer.addStream(self.codec)
        if inHeader { try muxer.addChapters(chapterTitles.map { ChapterMark(title: $0, frames: 0..<0) }) }
        if holdBack { output.reservePlaceholder(bytes: .max) }
        let pages = try muxer.writeHeader()
        if inHeader && !chapterTitles.isEmpty { headerPages = pages }
        if holdBack {
            guard let plain = OggChapterTimes.withoutChapters(pages) else {
                throw AudioError(.encodingFailed, subject: output.subject, reason: "cannot stream the Ogg header without its chapters")
            }
            output.reservePlaceholder(bytes: pages.count)
            output.sendToStream(plain)
        }
    }

    package func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
        try codec.write(samples, packets: muxer.write)
    }

    package func finish(chapters: [ChapterMark]) throws {
        guard !finished else { return }
        finished = true
        try codec.finish(packets: muxer.write)
        let marks = Array(chapters.prefix(chapterTitles.count))
        if headerPages.isEmpty && !marks.isEmpty { try muxer.addChapters(marks) }
        try muxer.finish()
        if !headerPages.isEmpty {
            let times = chapterTitles.indices.map { index in
                WebVTT.timestamp(
                    milliseconds: index < marks.count
                        ? ChapterMark.milliseconds(frames: marks[index].frames.lowerBound, sampleRate: format.sampleRate) : 0)
            }
            try OggChapterTimes.patch(&headerPages, times: times, subject: muxer.subject)
            try headerPages.withUnsafeBytes { try muxer.output.overwrite($0, at: 0) }
        }
    }
}

import CSndFile
import Foundation

/// 16-bit WAV, FLAC or AIFF through libsndfile, written through its virtual I/O into an
/// `EncodedOutput`. Writes the `PCM16` samples, the same values waveform peaks are computed from.
/// One owner of the `SNDFILE` (`deinit` closes it).
package final class SndFileEncoder: AudioEncoder {
    package enum Container {
        case wav, flac, aiff
    }

    package let format: AudioFormat
    private var handle: OpaquePointer?
    private let io: SndFileOutput
    private let encoding: Int32
    private var subject: String { io.output.subject }

    /// - Parameter encoding: the libsndfile subtype; fixtures use 8/24/32-bit and float WAV.
    package init(output: EncodedOutput, format: AudioFormat, container: Container, encoding: Int32 = Int32(SF_FORMAT_PCM_16)) throws {
        self.format = format
        self.encoding = encoding
        io = SndFileOutput(output: output)
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channels)
        switch container {
        case .wav: info.format = Int32(SF_FORMAT_WAV) | encoding
        case .flac: info.format = Int32(SF_FORMAT_FLAC) | encoding
        case .aiff: info.format = Int32(SF_FORMAT_AIFF) | encoding
        }
        handle = io.open(&info)
        try SndFile.check(handle != nil, "sf_open_virtual", handle: nil, subject: output.subject, reason: "cannot create the file")
        // Float input to sub-16-bit or integer encodings is clipped, not wrapped.
        let clipping = sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        try SndFile.check(clipping == SF_TRUE, "SFC_SET_CLIPPING", handle: handle, subject: output.subject, reason: "cannot enable clipping")
    }

    deinit { if handle != nil { sf_close(handle) } }

    package func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
        let frames = samples.count / format.channels
        guard frames > 0 else { return }
        let written: sf_count_t
        if encoding == Int32(SF_FORMAT_PCM_16) {
            written = sf_writef_short(handle, pcm16.baseAddress, sf_count_t(frames))
        } else {
            written = sf_writef_float(handle, samples.baseAddress, sf_count_t(frames))
        }
        if let failure = io.failure { throw failure }
        try SndFile.check(written == frames, "sf_writef", handle: handle, subject: subject, reason: "cannot write")
    }

    package func finish(chapters: [ChapterMark]) throws {
        guard let handle else { return }
        self.handle = nil
        let closed = sf_close(handle)
        if let failure = io.failure { throw failure }
        try SndFile.check(closed == 0, "sf_close", handle: nil, subject: subject, reason: "cannot finish writing")
    }
}

/// libsndfile's virtual I/O over an `EncodedOutput`: write at a position, seek, tell, length.
private final class SndFileOutput {
    let output: EncodedOutput
    private let cursor: OutputCursor
    var failure: (any Error)? { cursor.failure }

    init(output: EncodedOutput) {
        self.output = output
        cursor = OutputCursor(output: output)
    }

    func open(_ info: inout SF_INFO) -> OpaquePointer? {
        var io = SF_VIRTUAL_IO(
            get_filelen: { user in sf_count_t(SndFileOutput.from(user).output.length) },
            seek: { offset, whence, user in sf_count_t(SndFileOutput.from(user).cursor.seek(Int(offset), whence: whence) ?? -1) },
            read: { _, _, _ in 0 },
            write: { bytes, count, user in sf_count_t(SndFileOutput.from(user).cursor.write(bytes!, count: Int(count)) ?? 0) },
            tell: { user in sf_count_t(SndFileOutput.from(user).cursor.position) })
        return sf_open_virtual(&io, Int32(SFM_WRITE), &info, Unmanaged.passUnretained(self).toOpaque())
    }

    private static func from(_ user: UnsafeMutableRawPointer?) -> SndFileOutput {
        Unmanaged<SndFileOutput>.fromOpaque(user!).takeUnretainedValue()
    }
}

import CSndFile
import Foundation

/// 16-bit WAV, FLAC or AIFF through libsndfile. Writes the `PCM16` samples, the same values
/// waveform peaks are computed from. One owner of the `SNDFILE` (`deinit` closes it).
final class SndFileEncoder: AudioEncoder {
    enum Container {
        case wav, flac, aiff
    }

    let format: AudioFormat
    private var handle: OpaquePointer?
    private let url: URL

    /// - Parameter encoding: the libsndfile subtype; fixtures use 8/24/32-bit and float WAV.
    init(url: URL, format: AudioFormat, container: Container, encoding: Int32 = Int32(SF_FORMAT_PCM_16)) throws {
        self.format = format
        self.url = url
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channels)
        switch container {
        case .wav: info.format = Int32(SF_FORMAT_WAV) | encoding
        case .flac: info.format = Int32(SF_FORMAT_FLAC) | encoding
        case .aiff: info.format = Int32(SF_FORMAT_AIFF) | encoding
        }
        handle = sf_open(url.path, Int32(SFM_WRITE), &info)
        guard handle != nil else {
            throw AudioError(.writeFailed, subject: url.path, reason: "cannot create the file", underlying: String(cString: sf_strerror(nil)))
        }
        // Float input to sub-16-bit or integer encodings is clipped, not wrapped.
        sf_command(handle, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        self.encoding = encoding
    }

    private let encoding: Int32

    deinit { if handle != nil { sf_close(handle) } }

    func write(_ samples: UnsafeBufferPointer<Float>, pcm16: UnsafeBufferPointer<Int16>) throws {
        let frames = samples.count / format.channels
        guard frames > 0 else { return }
        let written: sf_count_t
        if encoding == Int32(SF_FORMAT_PCM_16) {
            written = sf_writef_short(handle, pcm16.baseAddress, sf_count_t(frames))
        } else {
            written = sf_writef_float(handle, samples.baseAddress, sf_count_t(frames))
        }
        guard written == frames else {
            throw AudioError(.writeFailed, subject: url.path, reason: "cannot write", underlying: String(cString: sf_strerror(handle)))
        }
    }

    func finish() throws {
        guard let handle else { return }
        self.handle = nil
        guard sf_close(handle) == 0 else {
            throw AudioError(.writeFailed, subject: url.path, reason: "cannot finish writing", underlying: String(cString: sf_strerror(nil)))
        }
    }
}

import CFFmpeg
import Foundation

/// Bytes for libavformat to read: a file or an in-memory buffer, behind a custom `AVIOContext`.
///
/// Going through custom I/O means the container is detected from content only, never from the
/// file name's extension. Owns the `AVIOContext` and its buffer; `deinit` frees both.
final class MediaInput {
    private enum Backing {
        case file(Int32)
        case memory(Data)
    }

    private let backing: Backing
    private let size: Int64
    private var position: Int64 = 0
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    private static let bufferSize = 64 * 1024

    /// Opens `url` for reading. Throws `fileNotFound` / `unreadable` / `emptyAudio` with the path as subject.
    init(url: URL) throws {
        let path = url.path
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw AudioError(.fileNotFound, subject: path, reason: "no such file")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw AudioError(.unreadable, subject: path, reason: "not a regular file")
        }
        guard status.st_size > 0 else {
            throw AudioError(.emptyAudio, subject: path, reason: "the file is empty (0 bytes)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw AudioError(.unreadable, subject: path, reason: "cannot open for reading", underlying: String(cString: strerror(errno)))
        }
        backing = .file(descriptor)
        size = Int64(status.st_size)
        try makeContext()
    }

    /// Wraps encoded bytes already in memory (a provider's response, a cached clip).
    init(data: Data, name: String) throws {
        guard !data.isEmpty else {
            throw AudioError(.emptyAudio, subject: name, reason: "no bytes (empty audio data)")
        }
        backing = .memory(data)
        size = Int64(data.count)
        try makeContext()
    }

    deinit {
        if context != nil {
            av_freep(&context!.pointee.buffer)
            avio_context_free(&context)
        }
        if case .file(let descriptor) = backing { close(descriptor) }
    }

    private func makeContext() throws {
        guard let buffer = av_malloc(Self.bufferSize)?.assumingMemoryBound(to: UInt8.self) else {
            throw AudioError(.unreadable, subject: "", reason: "out of memory")
        }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(
            buffer, Int32(Self.bufferSize), 0, opaque,
            { opaque, buffer, count in
                let input = Unmanaged<MediaInput>.fromOpaque(opaque!).takeUnretainedValue()
                return input.read(into: buffer!, count: Int(count))
            }, nil,
            { opaque, offset, whence in
                let input = Unmanaged<MediaInput>.fromOpaque(opaque!).takeUnretainedValue()
                return input.seek(offset: offset, whence: whence)
            })
        if context == nil {
            av_free(buffer)
            throw AudioError(.unreadable, subject: "", reason: "out of memory")
        }
    }

    private func read(into destination: UnsafeMutablePointer<UInt8>, count: Int) -> Int32 {
        let remaining = Int(size - position)
        guard remaining > 0 else { return FFmpeg.endOfFile }
        let wanted = min(count, remaining)
        var got = 0
        switch backing {
        case .file(let descriptor):
            got = pread(descriptor, destination, wanted, off_t(position))
            if got < 0 { return chorus_averror(errno) }
            if got == 0 { return FFmpeg.endOfFile }
        case .memory(let data):
            data.withUnsafeBytes { raw in
                let start = raw.baseAddress!.advanced(by: Int(position))
                destination.update(from: start.assumingMemoryBound(to: UInt8.self), count: wanted)
            }
            got = wanted
        }
        position += Int64(got)
        return Int32(got)
    }

    private func seek(offset: Int64, whence: Int32) -> Int64 {
        if whence & AVSEEK_SIZE != 0 { return size }
        let target: Int64
        switch whence & ~AVSEEK_FORCE {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = position + offset
        case SEEK_END: target = size + offset
        default: return Int64(chorus_averror(EINVAL))
        }
        guard target >= 0 else { return Int64(chorus_averror(EINVAL)) }
        position = target
        return target
    }
}

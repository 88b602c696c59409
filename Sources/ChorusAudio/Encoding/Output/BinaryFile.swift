import Foundation

/// A buffered, seekable output file (stdio) whose errors become `AudioError.writeFailed`.
/// It keeps its own position, so seeking to where it already is costs nothing (no buffer flush).
final class BinaryFile {
    private var handle: UnsafeMutablePointer<FILE>?
    private var position = 0
    let url: URL

    init(url: URL) throws {
        self.url = url
        handle = fopen(url.path, "wb")
        guard handle != nil else {
            throw AudioError(.writeFailed, subject: url.path, reason: "cannot create", underlying: String(cString: strerror(errno)))
        }
        setvbuf(handle, nil, _IOFBF, 256 * 1024)
    }

    deinit { if handle != nil { fclose(handle) } }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        guard fwrite(base, 1, bytes.count, handle) == bytes.count else { throw failure("cannot write") }
        position += bytes.count
    }

    func seek(to offset: Int) throws {
        guard offset != position else { return }
        guard fseeko(handle, off_t(offset), SEEK_SET) == 0 else { throw failure("cannot seek") }
        position = offset
    }

    func close() throws {
        guard let handle else { return }
        self.handle = nil
        guard fclose(handle) == 0 else { throw failure("cannot finish writing") }
    }

    private func failure(_ what: String) -> AudioError {
        AudioError(.writeFailed, subject: url.path, reason: what, underlying: String(cString: strerror(errno)))
    }
}

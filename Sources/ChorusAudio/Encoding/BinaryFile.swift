import Foundation

/// A buffered, seekable output file (stdio) whose errors become `AudioError.writeFailed`.
final class BinaryFile {
    private var handle: UnsafeMutablePointer<FILE>?
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
    }

    func write(_ bytes: [UInt8], count: Int) throws {
        try bytes.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    func seek(to offset: Int) throws {
        guard fseeko(handle, off_t(offset), SEEK_SET) == 0 else { throw failure("cannot seek") }
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

package import Foundation

/// Where one encoder's bytes go: any of a file (a temporary file until committed), memory, and an
/// `AudioChunkStream`. Encoders see one byte sequence with a write position; a write at an earlier
/// position overwrites (muxers patch headers, LAME writes its tag after the flush).
///
/// The first `placeholderBytes` are rewritten after the end (the MP3 LAME/Xing tag frame); a
/// stream, which cannot go back, leaves them out. Other overwrites need every destination to be
/// seekable: a stream with a format that patches its header (M4A, WAV, FLAC, AIFF) is refused up front.
package final class EncodedOutput {
    let subject: String
    private var file: BinaryFile?
    private var memory: Data?
    private let stream: AudioChunkStream?
    private let observer: (any EncodedAudioObserver)?
    /// Bytes written so far (the end of the sequence).
    private(set) var length = 0
    private var placeholderBytes = 0

    /// - Parameters:
    ///   - file: a file to create (the caller owns its name: usually an `AtomicOutput`'s temporary URL).
    ///   - memory: keep the bytes in memory.
    ///   - stream: forward bytes as they are written.
    ///   - observer: sees every write, in order.
    ///   - subject: how errors name this output.
    package init(
        file: URL?, memory: Bool = false, stream: AudioChunkStream? = nil, observer: (any EncodedAudioObserver)? = nil, subject: String
    ) throws {
        self.subject = subject
        self.file = try file.map(BinaryFile.init)
        self.memory = memory ? Data() : nil
        self.stream = stream
        self.observer = observer
    }

    /// A plain file.
    package convenience init(file: URL) throws {
        try self.init(file: file, subject: file.path)
    }

    /// True when every destination can go back and overwrite (no stream).
    var isSeekable: Bool { stream == nil }
    /// True when there is a stream.
    var isStreaming: Bool { stream != nil }
    /// True when the bytes are kept (a file or memory), not only streamed.
    var keepsBytes: Bool { file != nil || memory != nil }

    /// Declares that the first `count` bytes written are a placeholder rewritten after the end.
    func reservePlaceholder(bytes count: Int) {
        placeholderBytes = count
    }

    /// Sends `bytes` to the stream alone, in place of the placeholder it skipped (a header the
    /// stream gets in another form than the file: Ogg's, without chapter times).
    func sendToStream(_ bytes: [UInt8]) {
        stream?.write(Data(bytes))
    }

    /// Writes `bytes` at `position` (≤ `length`): appending at the end, overwriting before it.
    func write(_ bytes: UnsafeRawBufferPointer, at position: Int) throws {
        guard !bytes.isEmpty else { return }
        guard position >= 0, position <= length else {
            throw AudioError(.writeFailed, subject: subject, reason: "write past the end (at \(position) of \(length) bytes)")
        }
        let overlap = min(bytes.count, length - position)
        if overlap > 0 { try overwrite(UnsafeRawBufferPointer(rebasing: bytes[0..<overlap]), at: position) }
        if overlap < bytes.count { try append(UnsafeRawBufferPointer(rebasing: bytes[overlap...])) }
    }

    /// Appends `bytes` at the end.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard !bytes.isEmpty else { return }
        observer?.wrote(bytes, at: length)
        if let file {
            try file.seek(to: length)
            try file.write(bytes)
        }
        memory?.append(contentsOf: bytes)
        if let stream {
            let skip = max(0, min(bytes.count, placeholderBytes - length))
            if skip < bytes.count { stream.write(Data(bytes[skip...])) }
        }
        length += bytes.count
    }

    func append(_ bytes: [UInt8], count: Int) throws {
        try bytes.withUnsafeBytes { try append(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
    }

    /// Replaces bytes already written.
    func overwrite(_ bytes: UnsafeRawBufferPointer, at position: Int) throws {
        guard position >= 0, position + bytes.count <= length else {
            throw AudioError(.writeFailed, subject: subject, reason: "overwrite outside the written bytes")
        }
        if stream != nil && position + bytes.count > placeholderBytes {
            throw AudioError(.writeFailed, subject: subject, reason: "this format rewrites its header and cannot be streamed")
        }
        observer?.wrote(bytes, at: position)
        if let file {
            try file.seek(to: position)
            try file.write(bytes)
        }
        if memory != nil {
            memory!.withUnsafeMutableBytes { target in
                target.baseAddress!.advanced(by: position).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            }
        }
    }

    /// Closes the file, ends the stream; returns the bytes kept in memory.
    @discardableResult
    package func finish() throws -> Data? {
        try file?.close()
        file = nil
        stream?.finish()
        return memory
    }

    /// Ends the stream with `error` (the file is the caller's to discard).
    func fail(_ error: any Error) {
        stream?.finish(throwing: error)
    }

    /// The bytes kept in memory so far.
    var bytes: Data? { memory }
}

/// A position in an `EncodedOutput` for C libraries that write through callbacks (libavformat's
/// AVIO, libsndfile's virtual I/O): writes land at the position, seeks move it, and the first failure
/// is kept for the caller (the C library only sees a failed write).
final class OutputCursor {
    let output: EncodedOutput
    private(set) var position = 0
    private(set) var failure: (any Error)?

    init(output: EncodedOutput) { self.output = output }

    /// Writes `count` bytes at the position; returns `count`, or `nil` after a failure.
    func write(_ bytes: UnsafeRawPointer, count: Int) -> Int? {
        do {
            try output.write(UnsafeRawBufferPointer(start: bytes, count: count), at: position)
            position += count
            return count
        } catch {
            if failure == nil { failure = error }
            return nil
        }
    }

    /// Moves to `offset` from the start (`SEEK_SET`), the position (`SEEK_CUR`) or the end (`SEEK_END`);
    /// returns the new position, or `nil` for a place outside the written bytes.
    func seek(_ offset: Int, whence: Int32) -> Int? {
        let target: Int
        switch whence {
        case SEEK_SET: target = offset
        case SEEK_CUR: target = position + offset
        case SEEK_END: target = output.length + offset
        default: return nil
        }
        guard target >= 0, target <= output.length else { return nil }
        position = target
        return target
    }
}

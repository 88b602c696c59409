import CFFmpeg

/// A custom write-only `AVIOContext` in front of an `EncodedOutput`, so libavformat's muxers write
/// to files, memory and streams alike. Seekable (muxers may patch headers) unless the output
/// streams. Owns the context and its buffer; `deinit` frees both.
final class MuxerOutput {
    let output: EncodedOutput
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    private let cursor: OutputCursor
    private static let bufferSize = 64 * 1024
    /// Bytes written while capturing (see `capture`).
    private var captured: [UInt8]?

    init(output: EncodedOutput) throws {
        self.output = output
        cursor = OutputCursor(output: output)
        guard let buffer = av_malloc(Self.bufferSize)?.assumingMemoryBound(to: UInt8.self) else {
            throw AudioError(.encodingFailed, subject: output.subject, reason: "out of memory")
        }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        let write: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = { opaque, bytes, count in
            Unmanaged<MuxerOutput>.fromOpaque(opaque!).takeUnretainedValue().write(bytes!, count: Int(count))
        }
        let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
            Unmanaged<MuxerOutput>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence: whence)
        }
        context = avio_alloc_context(buffer, Int32(Self.bufferSize), 1, opaque, nil, write, output.isSeekable ? seek : nil)
        guard context != nil else {
            av_free(buffer)
            throw AudioError(.encodingFailed, subject: output.subject, reason: "out of memory")
        }
    }

    deinit {
        if context != nil {
            av_freep(&context!.pointee.buffer)
            avio_context_free(&context)
        }
    }

    /// Writes out what the context still buffers; throws the first write failure.
    func flush() throws {
        avio_flush(context)
        if let failure = cursor.failure { throw failure }
        if let context, context.pointee.error < 0 {
            try FFmpeg.check(context.pointee.error, "avio_flush", subject: output.subject, reason: "cannot write", as: .writeFailed)
        }
    }

    /// Runs `body` (which must only append: a muxer writing its header) and returns the bytes it wrote, flushed.
    func capture(_ body: () throws -> Void) throws -> [UInt8] {
        captured = []
        defer { captured = nil }
        try body()
        try flush()
        return captured ?? []
    }

    /// The error to report for a failed FFmpeg call: ours from a callback if there was one.
    func error(or fallback: any Error) -> any Error { cursor.failure ?? fallback }

    private func write(_ bytes: UnsafeMutablePointer<UInt8>, count: Int) -> Int32 {
        captured?.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
        return cursor.write(bytes, count: count).map { Int32($0) } ?? chorus_averror(EIO)
    }

    private func seek(_ offset: Int64, whence: Int32) -> Int64 {
        if whence & AVSEEK_SIZE != 0 { return Int64(output.length) }
        return cursor.seek(Int(offset), whence: whence & ~AVSEEK_FORCE).map(Int64.init) ?? Int64(chorus_averror(EINVAL))
    }
}

import ChorusAudio
import ChorusSupport
import Crypto

/// A render's ETag and length, from its audio as the encoder writes it: the SHA-256 of every write in order — its
/// position, its length, its bytes (a header patched at the end is a write like any other) — so the same bytes
/// written the same way give the same tag, and no file is read back to make it.
final class AudioDigest: EncodedAudioObserver, Sendable {
    private let state = Locked((hash: SHA256(), length: 0))

    func wrote(_ bytes: UnsafeRawBufferPointer, at position: Int) {
        state.withLock { state in
            withUnsafeBytes(of: Int64(position).littleEndian) { state.hash.update(bufferPointer: $0) }
            withUnsafeBytes(of: Int64(bytes.count).littleEndian) { state.hash.update(bufferPointer: $0) }
            state.hash.update(bufferPointer: bytes)
            state.length = max(state.length, position + bytes.count)
        }
    }

    /// The audio's length in bytes.
    var length: Int { state.withLock { $0.length } }

    /// `"` + the first 12 bytes of the digest in hex + `"`: a strong validator for range requests and `If-None-Match`.
    var etag: String { "\"" + Hex.string(state.withLock { $0.hash }.finalize().prefix(12)) + "\"" }
}

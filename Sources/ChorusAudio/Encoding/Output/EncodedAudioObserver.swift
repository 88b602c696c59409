/// Sees a render's encoded audio as it is written, write by write: a digest of it, its length, without reading the
/// file back. Writes come in the order the encoder makes them, from the encoder's thread; a write at a position
/// before the end overwrites (a header patched at the end: MP3's LAME tag, an M4A's index, a WAV's sizes), so the
/// same writes in the same order always leave the same bytes.
///
/// ```swift
/// final class Counter: EncodedAudioObserver, @unchecked Sendable {
///     var bytes = 0
///     func wrote(_ data: UnsafeRawBufferPointer, at position: Int) { bytes = max(bytes, position + data.count) }
/// }
/// var outputs = RenderOutputs(audio: URL(fileURLWithPath: "chat.mp3"))
/// outputs.observer = Counter()
/// ```
public protocol EncodedAudioObserver: AnyObject, Sendable {
    /// `bytes` were written at `position` (≤ the length so far).
    func wrote(_ bytes: UnsafeRawBufferPointer, at position: Int)
}

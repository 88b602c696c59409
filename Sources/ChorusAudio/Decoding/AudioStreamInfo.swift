/// What a container says about its audio stream, before decoding.
public struct AudioStreamInfo: Sendable, Codable, Equatable {
    /// Container short name as FFmpeg knows it (`mp3`, `mov,mp4,m4a,3gp,3g2,mj2`, `wav`, `ogg`, …).
    public var container: String
    /// Human name of the container.
    public var containerDescription: String
    /// Codec short name (`mp3float`, `aac`, `pcm_s16le`, `flac`, `opus`, `vorbis`, …).
    public var codec: String
    /// Human name of the codec.
    public var codecDescription: String
    /// Source sample rate in Hz.
    public var sampleRate: Int
    /// Source channel count.
    public var channels: Int
    /// Bit rate in bits per second, when known.
    public var bitRate: Int?
    /// Duration the container declares (header or index), in seconds, when it declares one.
    /// Decoders may yield a different count; `AudioProbe` reports the decoded one.
    public var declaredDuration: Double?
}

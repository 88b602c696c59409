public import Foundation

/// Where a render's results go. The encoded audio may go to a file, to memory
/// (`RenderResult.audio`), to an `AudioChunkStream` while it is encoded, or to several of them;
/// the timeline, waveform and captions may go to files (they are always in the `RenderResult`).
///
/// Every file is written under a temporary name beside its destination and renamed into place
/// only when the whole render succeeded: a failed or cancelled render leaves nothing behind and
/// never replaces an existing file.
///
/// ```swift
/// let files = RenderOutputs(audio: URL(fileURLWithPath: "out.mp3"), timeline: URL(fileURLWithPath: "out.json"))
/// var live = RenderOutputs(format: .mp3)
/// live.stream = AudioChunkStream()
/// ```
public struct RenderOutputs: Sendable {
    /// The audio file; its extension gives the format unless `format` is set.
    public var audio: URL?
    /// The encoded format; `nil` takes it from `audio`'s extension.
    public var format: OutputFileFormat?
    /// Receives the encoded audio as it is produced (MP3 and Ogg only).
    public var stream: AudioChunkStream?
    /// Keep the encoded audio in `RenderResult.audio`.
    public var keepAudioInMemory = false
    public var timeline: URL?
    /// `.json` or `.dat` (audiowaveform formats); needs `RenderOptions.waveform`.
    public var waveform: URL?
    /// WebVTT.
    public var captions: URL?
    /// Sees the encoded audio as it is written (a digest of the file while it is made, not read back afterwards).
    public var observer: (any EncodedAudioObserver)?

    /// Audio to a file, optionally with side files.
    public init(audio: URL, timeline: URL? = nil, waveform: URL? = nil, captions: URL? = nil) {
        self.audio = audio
        self.timeline = timeline
        self.waveform = waveform
        self.captions = captions
    }

    /// Audio in `format` with no file: set `stream` and/or `keepAudioInMemory` (the latter is the default).
    public init(format: OutputFileFormat, keepAudioInMemory: Bool = true) {
        self.format = format
        self.keepAudioInMemory = keepAudioInMemory
    }

    /// The encoded format: `format`, else the audio file's extension.
    /// - Throws: `AudioError.invalidArgument` when neither says.
    public func audioFormat() throws -> OutputFileFormat {
        if let format { return format }
        guard let audio else {
            throw AudioError(.invalidArgument, subject: "outputs", reason: "no audio file and no format")
        }
        return try OutputFileFormat(url: audio)
    }

    /// Checks that the outputs make sense together with `options`.
    func validate(options: RenderOptions) throws {
        let format = try audioFormat()
        if audio == nil && stream == nil && !keepAudioInMemory {
            throw AudioError(.invalidArgument, subject: "outputs", reason: "the audio goes nowhere (no file, no stream, not kept in memory)")
        }
        if stream != nil && !format.isStreamable {
            throw AudioError.invalid("format", format.rawValue, "cannot be streamed while it is encoded; stream mp3 or ogg")
        }
        if waveform != nil && options.waveform == nil {
            throw AudioError(.invalidArgument, subject: "waveform", reason: "an output file was given without waveform options")
        }
        if let waveform { _ = try WaveformFileFormat(url: waveform) }
        if options.waveform != nil && format.isLossy && audio == nil && !keepAudioInMemory {
            // A render's peaks are its audio's as a decoder reads it back (`RenderSession`): a stream alone keeps nothing to decode.
            throw AudioError(
                .invalidArgument, subject: "waveform", reason: "peaks of \(format.rawValue) output need the audio in a file or in memory")
        }
        let paths = [audio, timeline, waveform, captions].compactMap { $0?.standardizedFileURL.path }
        if Set(paths).count != paths.count {
            throw AudioError(.invalidArgument, subject: "outputs", reason: "two outputs name the same file")
        }
    }
}

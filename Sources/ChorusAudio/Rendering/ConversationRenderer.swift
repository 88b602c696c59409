import Foundation

/// Progress of a render, reported after each message is written.
public struct RenderProgress: Sendable {
    public var completed: Int
    public var total: Int
}

/// What a render produced besides the files.
public struct RenderResult: Sendable {
    public var timeline: Timeline
    public var waveform: WaveformPeaks?
    /// CPU time per stage, summed over parallel workers.
    public var timings: StageTimings
    /// Wall-clock time of the whole render, seconds.
    public var wallSeconds: Double
    /// Per-message loudness decisions, by message index.
    public var normalization: [NormalizationResult?]
    /// Things the user should know that did not stop the render (e.g. a silent clip).
    public var warnings: [String]
}

/// Renders a conversation into one audio file plus timeline, waveform peaks and captions.
///
/// Messages are decoded, resampled, trimmed, normalized and faded in parallel (at most
/// `options.concurrency` at once, plus one waiting), while the encoder consumes finished ones in
/// order; memory stays bounded by a few messages, whatever the conversation's length.
/// Gaps are exactly `round(gap_ms / 1000 × sampleRate)` frames of digital silence.
///
/// ```swift
/// let conversation = try Conversation.load(from: URL(fileURLWithPath: "samples/conversation.json"))
/// let renderer = ConversationRenderer(options: RenderOptions())
/// let result = try await renderer.render(try conversation.recordedMessages(),
///                                        gapMilliseconds: conversation.gapMilliseconds,
///                                        to: RenderOutputs(audio: URL(fileURLWithPath: "out.mp3")))
/// print(result.timeline.duration)
/// ```
public struct ConversationRenderer: Sendable {
    public var options: RenderOptions

    public init(options: RenderOptions) {
        self.options = options
    }

    /// Renders `messages` in order.
    /// - Parameters:
    ///   - messages: at least one message.
    ///   - gapMilliseconds: the conversation's gap, used when `options.gapMilliseconds` is `nil` (default 300).
    ///   - outputs: files to write; all appear together at the end, or none do.
    ///   - progress: called after each message is written.
    /// - Throws: `AudioError` naming the message (`messages[3]`) and file, or the option, that failed.
    public func render(_ messages: [RenderMessage], gapMilliseconds: Int? = nil, to outputs: RenderOutputs,
                       progress: (@Sendable (RenderProgress) -> Void)? = nil) async throws -> RenderResult {
        let started = Clock.now
        let fileFormat = try OutputFileFormat(url: outputs.audio)
        try options.validate(for: fileFormat)
        guard !messages.isEmpty else {
            throw AudioError(.invalidConversation, subject: "conversation", reason: "has no messages")
        }
        let gapMs = options.gapMilliseconds ?? gapMilliseconds ?? 300
        guard (0...60_000).contains(gapMs) else {
            throw AudioError(.invalidArgument, subject: "gap_ms \(gapMs)", reason: "must be between 0 and 60000 milliseconds")
        }
        if outputs.waveform != nil && options.waveform == nil {
            throw AudioError(.invalidArgument, subject: "waveform", reason: "an output file was given without waveform options")
        }
        if let url = outputs.waveform { try WaveformOptions.validateFileExtension(url) }
        let format = options.outputFormat(for: fileFormat)
        let destinations = [outputs.audio, outputs.timeline, outputs.waveform, outputs.captions].compactMap { $0?.standardizedFileURL.path }
        if Set(destinations).count != destinations.count {
            throw AudioError(.invalidArgument, subject: "outputs", reason: "two outputs name the same file")
        }

        let audioOutput = try AtomicOutput(destination: outputs.audio)
        let sideOutputs = try [outputs.timeline, outputs.waveform, outputs.captions].map { try $0.map(AtomicOutput.init) }
        defer {
            audioOutput.discard()
            sideOutputs.forEach { $0?.discard() }
        }

        let stitcher = try Stitcher(
            encoder: EncoderFactory.make(EncoderSettings(fileFormat: fileFormat, format: format, bitRate: options.bitRate,
                                                         mp3Quality: options.mp3Quality), url: audioOutput.temporaryURL),
            waveform: options.waveform.map { try WaveformGenerator(sampleRate: format.sampleRate, channels: format.channels, zoom: $0.zoom) },
            gapFrames: format.frames(milliseconds: gapMs))
        let processor = MessageProcessor(format: format, options: options)
        var timings = StageTimings()
        var warnings: [String] = []
        var segments: [Timeline.Segment] = []
        var normalization: [NormalizationResult?] = []
        segments.reserveCapacity(messages.count)

        let window = options.concurrency + 1
        try await withThrowingTaskGroup(of: ProcessedMessage.self) { group in
            var launched = 0
            var waiting: [Int: ProcessedMessage] = [:]
            var nextToWrite = 0
            while launched < min(window, messages.count) {
                let index = launched
                group.addTask { try Self.process(messages[index], index: index, with: processor) }
                launched += 1
            }
            while let processed = try await group.next() {
                waiting[processed.index] = processed
                while let ready = waiting.removeValue(forKey: nextToWrite) {
                    try Task.checkCancellation()
                    let message = messages[ready.index]
                    let placed = try stitcher.append(ready.audio)
                    segments.append(Self.segment(for: message, ready, placed: placed, format: format))
                    normalization.append(ready.normalization)
                    timings.merge(ready.timings)
                    warnings += ready.warnings
                    nextToWrite += 1
                    progress?(RenderProgress(completed: nextToWrite, total: messages.count))
                    if launched < messages.count {
                        let index = launched
                        group.addTask { try Self.process(messages[index], index: index, with: processor) }
                        launched += 1
                    }
                }
            }
        }

        let peaks = try stitcher.finish()
        timings.merge(stitcher.timings)
        let timeline = Timeline(format: format, samples: stitcher.framesWritten, gapMs: gapMs, segments: segments)
        if let output = sideOutputs[0] { try output.write(timeline.jsonData()) }
        if let output = sideOutputs[1], let peaks, let waveform = options.waveform {
            try output.write(peaks.fileData(for: output.destination, bits: waveform.bits))
        }
        if let output = sideOutputs[2] { try output.write(Data(WebVTT.captions(for: timeline).utf8)) }
        try audioOutput.commit()
        for output in sideOutputs { try output?.commit() }
        return RenderResult(timeline: timeline, waveform: peaks, timings: timings, wallSeconds: Clock.now - started,
                            normalization: normalization, warnings: warnings)
    }

    private static func process(_ message: RenderMessage, index: Int, with processor: MessageProcessor) throws -> ProcessedMessage {
        do {
            return try processor.process(message, index: index)
        } catch let error as AudioError {
            throw error.about("messages[\(index)] (\(message.speaker))")
        }
    }

    private static func segment(for message: RenderMessage, _ processed: ProcessedMessage, placed: Range<Int>,
                                format: AudioFormat) -> Timeline.Segment {
        let rate = format.sampleRate
        var words: [Timeline.Word]?
        if let timings = message.words {
            // Clip time → output time: shift by where the clip landed minus what trimming cut, clamp, keep order.
            let offset = Double(placed.lowerBound - processed.leadingTrimFrames) / Double(rate)
            let low = Double(placed.lowerBound) / Double(rate)
            let high = Double(placed.upperBound) / Double(rate)
            var previous = low
            words = timings.compactMap { timing in
                let start = min(high, max(previous, timing.start + offset))
                let end = min(high, max(start, timing.end + offset))
                previous = start
                return Timeline.Word(word: timing.word, start: Timeline.round(start), end: Timeline.round(end))
            }
        }
        return Timeline.Segment(
            index: processed.index, speaker: message.speaker,
            start: Timeline.seconds(placed.lowerBound, rate), end: Timeline.seconds(placed.upperBound, rate),
            startSample: placed.lowerBound, endSample: placed.upperBound, text: message.text, source: message.label,
            gainDB: (processed.gainDB * 100).rounded() / 100, voice: message.voice,
            fallback: message.fallback ? true : nil, words: words)
    }
}

extension Timeline {
    static func round(_ seconds: Double) -> Double { (seconds * 1_000_000).rounded() / 1_000_000 }
}

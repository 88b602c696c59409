import ChorusSupport
package import ChorusWire
import Foundation

/// One render's engine half: validated settings, the encoder and waveform behind the `Stitcher`,
/// the outputs (temporary files until `finish()`), and the timeline as messages are placed.
///
/// The caller (the `Chorus` entry point) decides when messages exist and runs `processor` on
/// worker threads in parallel; it hands finished messages to `append` in order, one at a time,
/// then calls `finish()` — or `discard(_:)`, after which nothing is left behind.
package final class RenderSession: @unchecked Sendable {
    package let format: AudioFormat
    package let fileFormat: OutputFileFormat
    package let gapMilliseconds: Int
    /// Decode → trim → normalize → fade for one message; safe to call from several threads at once.
    package let processor: MessageProcessor
    private let options: RenderOptions
    private let outputs: RenderOutputs
    private let encoded: EncodedOutput
    private let audioFile: AtomicOutput?
    private let sideFiles: [AtomicOutput?]
    private let stitcher: Stitcher
    private let started = MonotonicClock.now
    private var segments: [Timeline.Segment] = []
    /// Each placed message's frames in the output and what trimming cut from its start (to place words heard later).
    private var placements: [(placed: Range<Int>, leadingTrimFrames: Int)] = []
    private var normalization: [NormalizationResult?] = []
    private var timings = StageTimings()
    private var warnings: [String] = []
    /// The voices made from recordings among the render's, for the timeline (set before anything is appended).
    package var madeVoices: [String: MadeVoiceInfo] = [:]
    private var done = false
    private let chapterTitles: [String]
    private let messageGaps: [Int?]
    /// Chapter titles of the intro and outro, when there are chapters and the render has them.
    private let introTitle: String?, outroTitle: String?
    private var intro: Timeline.Bookend?
    private var outro: Timeline.Bookend?

    /// Validates `options`, `gapMilliseconds` and `outputs`, and opens the outputs.
    /// - Parameters:
    ///   - messageGaps: by message, its own gap before it (`nil`: `gapMilliseconds`); negative overlaps the message
    ///     before (checked by `RenderOptions.validate(messageGapMilliseconds:field:)`).
    ///   - chapterTitles: one per message, in order (`ChapterTitle.make`); used when `options.chapters`.
    ///   - bookends: whether an intro and an outro will be placed (`appendIntro`, `appendOutro`), with their chapter
    ///     titles.
    ///   - music: a bed under the whole program (`MusicBed`): opened and measured here.
    ///   - growingTitles: how many messages may get their text only once heard (recorded, without text): their
    ///     chapters are titled by what was heard (`ChapterTitle.make` of the segment's text) where the file's format
    ///     takes titles at the end (MP3 keeps room for them, MP4 writes them last; Ogg keeps the speaker's name).
    /// - Throws: `AudioError.invalidArgument` naming the field; `writeFailed` naming a file that cannot be created.
    package init(
        options: RenderOptions, gapMilliseconds: Int, messageGaps: [Int?] = [], outputs: RenderOutputs, chapterTitles: [String] = [],
        bookends: (intro: String?, outro: String?) = (nil, nil), music: MusicBed? = nil, growingTitles: Int = 0
    ) throws {
        let fileFormat = try outputs.audioFormat()
        try options.validate(for: fileFormat)
        try RenderOptions.validate(gapMilliseconds: gapMilliseconds)
        for (index, gap) in messageGaps.enumerated() {
            if let gap { try RenderOptions.validate(messageGapMilliseconds: gap, field: "messages[\(index)].gap_ms") }
        }
        self.messageGaps = messageGaps
        try outputs.validate(options: options)
        self.fileFormat = fileFormat
        self.options = options
        self.outputs = outputs
        self.gapMilliseconds = gapMilliseconds
        let format = options.outputFormat(for: fileFormat)
        self.format = format
        let chapterTitles = options.chapters ? chapterTitles : []
        self.chapterTitles = chapterTitles
        introTitle = options.chapters ? bookends.intro : nil
        outroTitle = options.chapters ? bookends.outro : nil
        let allTitles = [introTitle].compactMap { $0 } + chapterTitles + [outroTitle].compactMap { $0 }
        let bed = try music.map { try BedMixer(bed: $0, format: format, targetLoudness: options.targetLoudness) }
        // Speech and the bed under it together stay under the ceiling: messages are normalized under a ceiling lowered
        // by the bed's true peak when ducked (1 dB over what its first minute measured), at most 6 dB lower.
        var processing = options
        let ceiling = options.truePeakCeiling - LoudnessNormalizer.meterMargin
        if let bed, options.normalize {
            let room = pow(10, ceiling / 20) - pow(10, (bed.duckedTruePeakDB + 1) / 20)
            processing.truePeakCeiling = max(options.truePeakCeiling - 6, 20 * log10(max(room, 1e-9)) + LoudnessNormalizer.meterMargin)
        }
        audioFile = try outputs.audio.map(AtomicOutput.init)
        sideFiles = try [outputs.timeline, outputs.waveform, outputs.captions].map { try $0.map(AtomicOutput.init) }
        do {
            encoded = try EncodedOutput(
                file: audioFile?.temporaryURL, memory: outputs.keepAudioInMemory, stream: outputs.stream, observer: outputs.observer,
                subject: outputs.audio?.path ?? "\(fileFormat.rawValue) output")
            var settings = EncoderSettings(
                fileFormat: fileFormat, format: format, bitRate: options.bitRate, mp3Quality: options.mp3Quality,
                chapterTitles: allTitles, encoderJobs: options.serialEncode ? 1 : options.jobs)
            settings.withoutSilence = bed != nil
            settings.growingChapterTitles = chapterTitles.isEmpty ? 0 : growingTitles
            stitcher = try Stitcher(
                encoder: EncoderFactory.make(settings, output: encoded),
                // Lossless output decodes to the very 16-bit samples stitched: their peaks are taken on the way.
                waveform: fileFormat.isLossy
                    ? nil
                    : options.waveform.map { try WaveformGenerator(sampleRate: format.sampleRate, channels: format.channels, zoom: $0.zoom) },
                gapFrames: format.frames(milliseconds: gapMilliseconds),
                overlapCeiling: options.normalize ? processing.truePeakCeiling - LoudnessNormalizer.meterMargin : 0,
                bed: bed, bedCeiling: options.normalize ? ceiling : 0)
        } catch {
            [audioFile].compactMap { $0 }.forEach { $0.discard() }
            sideFiles.forEach { $0?.discard() }
            outputs.stream?.finish(throwing: error)
            throw error
        }
        processor = MessageProcessor(format: format, options: processing)
    }

    deinit {
        if !done { discard(CancellationError()) }
    }

    /// Stitches `processed` (message `processed.index`) after what is already written and returns
    /// its timeline entry, whose position in the output is now fixed.
    package func append(_ processed: ProcessedMessage, for message: RenderMessage) throws -> Timeline.Segment {
        let index = segments.count
        let gap = gapFrames(before: index)
        let next = gapFrames(before: index + 1)
        let (placed, overlap) = try stitcher.append(processed.audio, gapFrames: gap, holdBack: max(0, -next))
        if (index > 0 || intro != nil) && gap < 0 && overlap < -gap {
            warnings.append(
                "\(RenderMessage.subject(index: index, speaker: message.speaker)): gap_ms \(messageGaps[index] ?? 0) reaches back "
                    + "further than the message before lasts; it starts with that message instead")
        }
        let segment = segment(for: message, processed, placed: placed)
        segments.append(segment)
        placements.append((placed, processed.leadingTrimFrames))
        normalization.append(processed.normalization)
        timings.merge(processed.timings)
        warnings += processed.warnings
        return segment
    }

    /// Gives message `index`, already placed, the words heard in it since (in clip time, as `RenderMessage.words`) and,
    /// when it came without text, the text heard; returns its timeline entry as it is now. Call it before `finish()`:
    /// the audio never waits for words, the timeline, captions and chapter titles do.
    package func hear(_ index: Int, words: [WordTiming], transcribedText: String?) -> Timeline.Segment {
        var segment = segments[index]
        segment.words = Self.words(words, placed: placements[index].placed, leadingTrimFrames: placements[index].leadingTrimFrames, format: format)
        if let transcribedText {
            segment.text = transcribedText
            segment.transcribed = true
        }
        segments[index] = segment
        return segment
    }

    /// Adds `warning` to the render's result (what the caller learnt about a message outside `append`).
    package func warn(_ warning: String) { warnings.append(warning) }

    /// Places the intro before the first message (call it before any `append`).
    package func appendIntro(_ processed: ProcessedMessage, for message: RenderMessage) throws {
        precondition(segments.isEmpty && intro == nil, "the intro goes first")
        let placed = try stitcher.append(processed.audio, gapFrames: 0, holdBack: max(0, -gapFrames(before: 0))).placed
        intro = bookend(segment(for: message, processed, placed: placed), spoken: message.voice != nil)
        timings.merge(processed.timings)
        warnings += processed.warnings
    }

    /// Places the outro the conversation's gap after the last message (call it after the last `append`).
    package func appendOutro(_ processed: ProcessedMessage, for message: RenderMessage) throws {
        let placed = try stitcher.append(processed.audio, gapFrames: format.frames(milliseconds: gapMilliseconds), holdBack: 0).placed
        outro = bookend(segment(for: message, processed, placed: placed), spoken: message.voice != nil)
        timings.merge(processed.timings)
        warnings += processed.warnings
    }

    private func bookend(_ segment: Timeline.Segment, spoken: Bool) -> Timeline.Bookend {
        Timeline.Bookend(
            start: segment.start, end: segment.end, startSample: segment.startSample, endSample: segment.endSample,
            speaker: spoken ? segment.speaker : nil, text: segment.text, source: segment.source, gainDB: segment.gainDB,
            voice: segment.voice, words: segment.words)
    }

    /// The gap before message `index` in frames (negative: an overlap).
    private func gapFrames(before index: Int) -> Int {
        let gap = (index < messageGaps.count ? messageGaps[index] : nil) ?? gapMilliseconds
        return gap < 0 ? -format.frames(milliseconds: -gap) : format.frames(milliseconds: gap)
    }

    /// Finishes the encoder, writes the side files and moves every file into place.
    ///
    /// A render's waveform peaks are those of its audio as a decoder reads it back: what `chorus waveform` gives for the
    /// file, and what the service's waveform routes give for the stored render. Lossless output decodes to the samples
    /// stitched, so their peaks are taken while stitching; lossy output is decoded here, once encoded.
    package func finish() throws -> RenderResult {
        // A message titled by its speaker until heard is titled by what was heard.
        let titles = chapterTitles.indices.map { index in
            guard index < segments.count, segments[index].transcribed == true else { return chapterTitles[index] }
            return ChapterTitle.make(speaker: segments[index].speaker, text: segments[index].text)
        }
        var peaks = try stitcher.finish(chapterTitles: [introTitle].compactMap { $0 } + titles + [outroTitle].compactMap { $0 })
        timings.merge(stitcher.timings)
        let audio = try encoded.finish()
        if let waveform = options.waveform, fileFormat.isLossy {
            peaks = try timings.measure(.waveform) { () throws -> WaveformPeaks? in
                if let file = audioFile?.temporaryURL { return try WaveformPeaks.compute(fileAt: file, zoom: waveform.zoom) }
                return try audio.map { try WaveformPeaks.compute(data: $0, name: "\(fileFormat.rawValue) output", zoom: waveform.zoom) }
            }
        }
        let music = stitcher.bed.map { bed in
            let end = min(stitcher.framesWritten, bed.endedAt ?? .max)
            return Timeline.Music(
                start: 0, end: format.roundedSeconds(frames: end), startSample: 0, endSample: end, source: bed.bed.label,
                levelLU: bed.bed.levelLU, duckDB: bed.bed.duckDB, gainDB: (bed.gainDB * 100).rounded() / 100,
                passes: bed.passes)
        }
        if stitcher.bedLimiterDB < -1 {
            warnings.append(
                "music: speech and the bed together went over the true-peak ceiling; limited by up to "
                    + "\(String(format: "%.1f", -stitcher.bedLimiterDB)) dB")
        }
        let timeline = Timeline(
            format: format, samples: stitcher.framesWritten, gapMs: gapMilliseconds, segments: segments,
            intro: intro, outro: outro, music: music, madeVoices: madeVoices)
        if let file = sideFiles[0] { try file.write(timeline.jsonData()) }
        if let file = sideFiles[1], let peaks, let waveform = options.waveform {
            try file.write(peaks.data(try WaveformFileFormat(url: file.destination), bits: waveform.bits))
        }
        if let file = sideFiles[2] { try file.write(Data(WebVTT.captions(for: timeline).utf8)) }
        try audioFile?.commit()
        for file in sideFiles { try file?.commit() }
        done = true
        return RenderResult(
            timeline: timeline, waveform: peaks, audio: audio, timings: timings,
            wallSeconds: MonotonicClock.now - started, normalization: normalization, warnings: warnings)
    }

    /// Abandons the render: temporary files are removed and a stream ends with `error`. Safe to call more than once.
    package func discard(_ error: any Error) {
        done = true
        encoded.fail(error)
        audioFile?.discard()
        sideFiles.forEach { $0?.discard() }
    }

    /// Where the message landed, with its word timings moved from clip time to output time (`words`).
    private func segment(for message: RenderMessage, _ processed: ProcessedMessage, placed: Range<Int>) -> Timeline.Segment {
        Timeline.Segment(
            index: processed.index, speaker: message.speaker,
            start: format.roundedSeconds(frames: placed.lowerBound), end: format.roundedSeconds(frames: placed.upperBound),
            startSample: placed.lowerBound, endSample: placed.upperBound, text: message.text, source: message.label,
            gainDB: (processed.gainDB * 100).rounded() / 100, voice: message.voice,
            fallback: message.fallback ? true : nil,
            words: message.words.map { Self.words($0, placed: placed, leadingTrimFrames: processed.leadingTrimFrames, format: format) },
            transcribed: message.transcribed ? true : nil)
    }

    /// Word timings moved from clip time to output time: shifted by the message's position minus what trimming cut,
    /// clamped inside it, kept in order.
    private static func words(_ timings: [WordTiming], placed: Range<Int>, leadingTrimFrames: Int, format: AudioFormat) -> [Timeline.Word] {
        let offset = format.seconds(frames: placed.lowerBound - leadingTrimFrames)
        let low = format.seconds(frames: placed.lowerBound)
        let high = format.seconds(frames: placed.upperBound)
        var previous = low
        return timings.map { timing in
            let start = min(high, max(previous, timing.start + offset))
            let end = min(high, max(start, timing.end + offset))
            previous = start
            return Timeline.Word(word: timing.word, start: AudioFormat.roundedToMicroseconds(start), end: AudioFormat.roundedToMicroseconds(end))
        }
    }
}

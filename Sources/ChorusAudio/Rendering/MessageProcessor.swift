/// A message after decode → resample → trim → normalize → fade, ready to be stitched.
struct ProcessedMessage: Sendable {
    var index: Int
    var audio: AudioBuffer
    /// Frames cut from the start of the clip by trimming (to shift word timings).
    var leadingTrimFrames: Int
    var gainDB: Double
    var normalization: NormalizationResult?
    var timings: StageTimings
    var warnings: [String]
}

/// The per-message half of the pipeline. Stateless: each call builds and frees its own C contexts,
/// so any number can run in parallel.
struct MessageProcessor: Sendable {
    var format: AudioFormat
    var options: RenderOptions

    func process(_ message: RenderMessage, index: Int) throws -> ProcessedMessage {
        var timings = StageTimings()
        var warnings: [String] = []
        var audio: AudioBuffer
        switch message.source {
        case .file(let url):
            let reader = try AudioFileReader(url: url, outputFormat: format)
            audio = try reader.readAll()
            timings.merge(reader.timings)
        case .files(let urls):
            audio = AudioBuffer(format: format)
            for url in urls {
                let reader = try AudioFileReader(url: url, outputFormat: format)
                audio.samples += try reader.readAll().samples
                timings.merge(reader.timings)
            }
        case .encoded(let data):
            let reader = try AudioFileReader(data: data, name: message.label, outputFormat: format)
            audio = try reader.readAll()
            timings.merge(reader.timings)
        case .pcm(let buffer):
            if buffer.format == format {
                audio = buffer
            } else {
                audio = try timings.measure(.resample) {
                    let resampler = try Resampler(from: buffer.format, to: format)
                    var samples: [Float] = []
                    try buffer.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &samples) }
                    try resampler.flush(into: &samples)
                    return AudioBuffer(format: format, samples: samples)
                }
            }
        }

        var leading = 0
        if options.trimSilence {
            timings.measure(.trim) {
                let range = options.trimmer.soundRange(of: audio)
                if range.isEmpty {
                    warnings.append("messages[\(index)] (\(message.label)) is silent; it takes no time in the output")
                }
                if range != 0..<audio.frameCount {
                    leading = range.lowerBound
                    audio = audio.frames(range)
                }
            }
        }

        var normalization: NormalizationResult?
        if options.normalize && audio.frameCount > 0 {
            let normalizer = LoudnessNormalizer(targetLUFS: options.targetLoudness, truePeakCeiling: options.truePeakCeiling)
            normalization = try timings.measure(.loudness) { try normalizer.normalize(&audio) }
            if let normalization, normalization.gainCapped, let loudness = normalization.measured.loudness {
                warnings.append(String(format: "messages[%d] (%@) is very quiet (%.1f LUFS); boosted by the maximum %.0f dB",
                                       index, message.label, loudness, normalizer.maxGainDB))
            }
        }
        timings.measure(.trim) { Fader(milliseconds: options.fadeMilliseconds).apply(to: &audio) }
        return ProcessedMessage(index: index, audio: audio, leadingTrimFrames: leading,
                                gainDB: normalization?.gainDB ?? 0, normalization: normalization,
                                timings: timings, warnings: warnings)
    }
}

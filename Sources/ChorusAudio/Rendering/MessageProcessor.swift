/// A message after decode → resample → trim → normalize → fade, ready to be stitched.
package struct ProcessedMessage: Sendable {
    package var index: Int
    var audio: AudioBuffer
    /// Frames cut from the start of the clip by trimming (to shift word timings).
    var leadingTrimFrames: Int
    var gainDB: Double
    var normalization: NormalizationResult?
    var timings: StageTimings
    package var warnings: [String]

    /// Seconds cut from the start of the clip by trimming: a time in `audio` plus this is a time in the clip.
    package var leadingTrimSeconds: Double { audio.format.seconds(frames: leadingTrimFrames) }

    /// The processed audio as a speech recognizer hears it: mono at `sampleRate`.
    /// - Throws: `AudioError` when it cannot be resampled.
    package func speech(sampleRate: Int) throws -> [Float] {
        let resampler = try Resampler(from: audio.format, to: AudioFormat(sampleRate: sampleRate, channels: 1))
        var samples: [Float] = []
        try audio.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &samples) }
        try resampler.flush(into: &samples)
        return samples
    }
}

/// The per-message half of the pipeline. Stateless: each call builds and frees its own C contexts,
/// so any number can run in parallel.
package struct MessageProcessor: Sendable {
    package var format: AudioFormat
    package var options: RenderOptions

    /// Decodes, resamples, trims, normalizes and fades message `index`.
    /// - Throws: `AudioError` about the clip; `corrupt` when it decodes to other than `expectedSourceFrames`.
    package func process(_ message: RenderMessage, index: Int) throws -> ProcessedMessage {
        var timings = StageTimings()
        var warnings = message.notes.map { "\(message.subject ?? RenderMessage.subject(index: index, speaker: message.speaker)): \($0)" }
        var audio: AudioBuffer
        var sourceFrames: Int?
        func decode(_ reader: AudioFileReader) throws -> AudioBuffer {
            let decoded = try reader.readAll()
            timings.merge(reader.timings)
            sourceFrames = (sourceFrames ?? 0) + reader.sourceFramesDecoded
            return decoded
        }
        switch message.source {
        case .file(let url):
            audio = try decode(AudioFileReader(url: url, outputFormat: format))
        case .parts(let parts):
            audio = AudioBuffer(format: format)
            for part in parts {
                switch part {
                case .file(let url): audio.samples += try decode(AudioFileReader(url: url, outputFormat: format)).samples
                case .silence(let seconds): audio.samples += repeatElement(0, count: max(0, format.frames(seconds: seconds)) * format.channels)
                }
            }
        case .encoded(let data):
            audio = try decode(AudioFileReader(data: data, name: message.label, outputFormat: format))
        case .pcm(let buffer):
            sourceFrames = buffer.frameCount
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

        if let expected = message.expectedSourceFrames, let sourceFrames, sourceFrames != expected {
            throw AudioError(.corrupt, subject: message.label, reason: "decodes to \(sourceFrames) frames instead of the \(expected) recorded for it")
        }

        if let cleanup = message.cleanup {
            audio = try timings.measure(.cleanup) { try cleanup.apply(to: audio, subject: message.label) }
        }

        var leading = 0
        if options.trimSilence {
            timings.measure(.trim) {
                let range = options.trimmer.soundRange(of: audio)
                if range.isEmpty {
                    warnings.append(
                        "\(message.subject ?? RenderMessage.subject(index: index, speaker: message.speaker)): \(message.label) is silent; it takes no time in the output"
                    )
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
                warnings.append(
                    (message.subject ?? RenderMessage.subject(index: index, speaker: message.speaker))
                        + String(
                            format: ": %@ is very quiet (%.1f LUFS); boosted by the maximum %.0f dB", message.label, loudness, normalizer.maxGainDB))
            }
        }
        timings.measure(.trim) { Fader(milliseconds: options.fadeMilliseconds).apply(to: &audio) }
        return ProcessedMessage(
            index: index, audio: audio, leadingTrimFrames: leading,
            gainDB: normalization?.gainDB ?? 0, normalization: normalization,
            timings: timings, warnings: warnings)
    }
}

import Foundation

/// Plays a `MusicBed` under a render as the `Stitcher` writes it: the bed's samples in order (looped), at its level,
/// ducked under the foreground spans (messages, intro, outro) the stitcher announces before it writes them, faded in
/// from the first frame and out from `endProgram(at:)`.
final class BedMixer {
    let bed: MusicBed
    let format: AudioFormat
    /// The gain that sets the bed to the target plus `levelLU`, dB.
    let gainDB: Double
    /// The bed's true peak under speech (at its level, ducked), dBTP, over what was measured.
    let duckedTruePeakDB: Double
    /// How many times the bed started (1 without looping).
    var passes: Int { source.passes }
    /// Where a bed that does not loop ended, in output frames (`nil`: it lasted).
    var endedAt: Int? { source.endedAt }
    /// Frames of tail after the last speech (the fade-out).
    let tailFrames: Int

    private let channels: Int
    private let levelGain: Float
    private let source: BedSource
    private var spans: [Range<Int>] = []
    private var firstLive = 0
    private var fadeOutStart = Int.max
    private let attack: Int, hold: Int, release: Int, fadeIn: Int
    private var bedBlock: [Float] = []
    private var gains: [Float] = []

    /// Opens and measures the bed.
    /// - Throws: `AudioError` about `field` (`music`) when the bed does not decode or is silent.
    init(bed: MusicBed, format: AudioFormat, targetLoudness: Double, field: String = "music") throws {
        try bed.validate(field: field)
        self.bed = bed
        self.format = format
        channels = format.channels
        do {
            source = try BedSource(bed: bed, format: format)
        } catch let error as AudioError {
            throw error.about("\(field).audio (\(bed.label))")
        }
        guard let loudness = source.loudness, loudness > -70 else {
            throw AudioError(
                .emptyAudio, subject: "\(field).audio (\(bed.label))", reason: "is silent: a music bed needs sound at least -70 LUFS loud")
        }
        gainDB = (targetLoudness + bed.levelLU - loudness)
        levelGain = Float(pow(10, gainDB / 20))
        duckedTruePeakDB = source.truePeak + gainDB - bed.duckDB
        attack = format.frames(milliseconds: MusicBed.attackMilliseconds)
        hold = format.frames(milliseconds: MusicBed.holdMilliseconds)
        release = format.frames(milliseconds: MusicBed.releaseMilliseconds)
        fadeIn = format.frames(milliseconds: bed.fadeInMilliseconds)
        tailFrames = format.frames(milliseconds: bed.fadeOutMilliseconds)
    }

    /// Speech (or a jingle) will occupy `span`: the bed dips under it. Spans come in order of their start.
    func add(span: Range<Int>) {
        guard !span.isEmpty else { return }
        spans.append(span)
    }

    /// The program's last speech ends at `frame`: the bed fades out over the tail after it.
    func endProgram(at frame: Int) { fadeOutStart = frame }

    /// Adds the bed to interleaved `samples`, the output's frames from `frame` on.
    func mix(into samples: inout [Float], at frame: Int) throws {
        let frames = samples.count / channels
        guard frames > 0 else { return }
        bedBlock.removeAll(keepingCapacity: true)
        try source.read(frames: frames, into: &bedBlock)
        // The gain at every 64th frame (and the last), linear in between: the envelope moves over hundreds of ms.
        let step = 64
        gains.removeAll(keepingCapacity: true)
        var offset = 0
        while true {
            gains.append(gain(at: frame + offset))
            if offset >= frames { break }
            offset = min(frames, offset + step)
        }
        bedBlock.withUnsafeBufferPointer { bed in
            samples.withUnsafeMutableBufferPointer { out in
                for block in 0..<(gains.count - 1) {
                    let first = block * step
                    let last = min(frames, first + step)
                    let from = gains[block]
                    let to = gains[block + 1]
                    if from == 0 && to == 0 { continue }
                    let slope = (to - from) / Float(last - first)
                    for index in first..<last {
                        let gain = from + slope * Float(index - first)
                        for channel in 0..<channels { out[index * channels + channel] += bed[index * channels + channel] * gain }
                    }
                }
            }
        }
    }

    /// The bed's linear gain at output frame `t`: level, ducking, fades.
    private func gain(at t: Int) -> Float {
        while firstLive < spans.count && spans[firstLive].upperBound + hold + release <= t && spans[firstLive].lowerBound <= t {
            firstLive += 1
        }
        var duck = 0.0
        var index = firstLive
        while index < spans.count && duck < 1 {
            let span = spans[index]
            if span.lowerBound - attack > t { break }
            duck = max(duck, Self.shape(t, span, attack: attack, hold: hold, release: release))
            index += 1
        }
        var gain = levelGain * (duck > 0 ? Float(pow(10, -bed.duckDB * duck / 20)) : 1)
        if t < fadeIn { gain *= Float(Self.raisedCosine(Double(t) / Double(fadeIn))) }
        if t >= fadeOutStart {
            gain *= tailFrames == 0 ? 0 : Float(1 - Self.raisedCosine(min(1, Double(t - fadeOutStart) / Double(tailFrames))))
        }
        return gain
    }

    /// How far the bed is ducked at `t` for one span, 0…1.
    static func shape(_ t: Int, _ span: Range<Int>, attack: Int, hold: Int, release: Int) -> Double {
        if t < span.lowerBound - attack { return 0 }
        if t < span.lowerBound { return raisedCosine(Double(t - (span.lowerBound - attack)) / Double(max(1, attack))) }
        if t < span.upperBound + hold { return 1 }
        if t < span.upperBound + hold + release { return 1 - raisedCosine(Double(t - span.upperBound - hold) / Double(max(1, release))) }
        return 0
    }

    /// 0 at 0, 1 at 1, flat at both ends.
    static func raisedCosine(_ x: Double) -> Double { (1 - cos(Double.pi * min(1, max(0, x)))) / 2 }
}

/// The bed's samples in the output's format, one pass after another when looping (each joined to the next by a
/// short crossfade), silence after the end otherwise. Its first minute is decoded at once and measured; a bed no longer
/// than that stays in memory and loops from there, a longer one is read as needed and opened again for each pass.
private final class BedSource {
    let format: AudioFormat
    let loop: Bool
    /// The integrated loudness of what was measured, LUFS (`nil`: silence).
    let loudness: Double?
    /// The true peak of what was measured, dBTP.
    let truePeak: Double
    private(set) var passes = 1
    /// Frames delivered so far.
    private(set) var delivered = 0
    /// Where a bed that does not loop ended, in frames delivered.
    private(set) var endedAt: Int?

    private let bed: MusicBed
    private let channels: Int
    /// The whole bed, when it is no longer than what is measured.
    private let whole: [Float]?
    private var reader: AudioFileReader?
    /// Decoded samples not yet delivered, from `offset`.
    private var pending: [Float]
    private var offset = 0
    private let crossfade: Int
    private var ended = false

    init(bed: MusicBed, format: AudioFormat) throws {
        self.bed = bed
        self.format = format
        channels = format.channels
        loop = bed.loop
        let limit = format.frames(seconds: MusicBed.measuredSeconds) * format.channels
        var first: [Float] = []
        var complete = false
        switch bed.source {
        case .pcm(let buffer):
            first = try Self.converted(buffer, to: format)
            complete = true
        default:
            let reader = try Self.open(bed, format: format)
            while first.count < limit, let block = try reader.read() { first += block }
            if first.count < limit {
                complete = true
                if first.isEmpty { throw AudioError(.emptyAudio, subject: bed.label, reason: "contains no audio samples") }
            } else {
                self.reader = reader
            }
        }
        let measured = AudioBuffer(format: format, samples: Array(first.prefix(limit)))
        var meter = IntegratedLoudness(format: format)
        measured.samples.withUnsafeBufferPointer { meter.add($0) }
        loudness = meter.loudness()
        truePeak = TruePeak.estimate(measured)
        let frames = first.count / channels
        crossfade =
            complete
            ? min(format.frames(milliseconds: MusicBed.loopCrossfadeMilliseconds), frames / 2)
            : format.frames(milliseconds: MusicBed.loopCrossfadeMilliseconds)
        whole = complete ? first : nil
        pending = first
    }

    private static func open(_ bed: MusicBed, format: AudioFormat) throws -> AudioFileReader {
        switch bed.source {
        case .file(let url): return try AudioFileReader(url: url, outputFormat: format)
        case .encoded(let data): return try AudioFileReader(data: data, name: bed.label, outputFormat: format)
        case .parts, .pcm: throw AudioError.invalid("music.audio", bed.label, "must be one clip")
        }
    }

    private static func converted(_ buffer: AudioBuffer, to format: AudioFormat) throws -> [Float] {
        guard buffer.format != format else { return buffer.samples }
        let resampler = try Resampler(from: buffer.format, to: format)
        var samples: [Float] = []
        try buffer.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &samples) }
        try resampler.flush(into: &samples)
        return samples
    }

    /// Appends the next `frames` frames of bed to `out`.
    func read(frames: Int, into out: inout [Float]) throws {
        let first = out.count
        defer { delivered += frames }
        let wanted = out.count + frames * channels
        while out.count < wanted {
            if ended {
                out.append(contentsOf: repeatElement(0, count: wanted - out.count))
                return
            }
            // Keep the pass's last `crossfade` frames back until its end is known.
            try fill(atLeast: (wanted - out.count) + crossfade * channels)
            let available = pending.count - offset
            let reserve = loop ? crossfade * channels : 0
            let take = min(wanted - out.count, max(0, available - (endOfPass ? reserve : 0)))
            if take > 0 {
                out.append(contentsOf: pending[offset..<(offset + take)])
                offset += take
                continue
            }
            guard endOfPass else { continue }
            // The pass is over: what is left of it (at most `crossfade` frames) fades into the next pass's start.
            let tail = Array(pending[offset...])
            guard loop else {
                out.append(contentsOf: tail)
                ended = true
                endedAt = delivered + (out.count - first) / channels
                pending = []
                offset = 0
                continue
            }
            // The next pass's first frames become the crossfade, delivered like any others (as many as are wanted now,
            // the rest on the next call).
            try startPass()
            let joined = tail.count / channels
            for frame in 0..<joined {
                let w = Float(frame + 1) / Float(joined + 1)
                for channel in 0..<channels {
                    let index = frame * channels + channel
                    pending[index] = tail[index] * (1 - w) + pending[index] * w
                }
            }
        }
    }

    /// True once the current pass has nothing more to decode (all of it is in `pending`).
    private var endOfPass: Bool { reader == nil }

    /// Decodes until `count` samples are pending or the pass ends.
    private func fill(atLeast count: Int) throws {
        if offset > 0 && offset >= pending.count / 2 {
            pending.removeFirst(offset)
            offset = 0
        }
        while let reader, pending.count - offset < count {
            if let block = try reader.read() {
                pending += block
            } else {
                self.reader = nil
            }
        }
    }

    /// Starts the bed again from its beginning.
    private func startPass() throws {
        passes += 1
        offset = 0
        if let whole {
            pending = whole
        } else {
            pending = []
            reader = try Self.open(bed, format: format)
            try fill(atLeast: crossfade * channels)
            guard pending.count >= crossfade * channels else {
                throw AudioError(
                    .corrupt, subject: bed.label, reason: "changed while the render played it (its next pass is shorter than its crossfade)")
            }
        }
    }
}

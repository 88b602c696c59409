public import ChorusAudio
import ChorusFixtures
public import Foundation
public import Testing

// Independent referees and assertions shared by the test targets.

/// Runs the `ffmpeg` program, an independent referee for what decoders yield. Never used by the product.
public enum Referee {
    public static let ffmpeg: String? = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
    public static var available: Bool { ffmpeg != nil }

    /// Decodes `url` with ffmpeg to interleaved 16-bit samples at the file's own rate and channels.
    public static func decodeS16(_ url: URL) throws -> [Int16] {
        let data = try ToolRun(["-v", "error", "-i", url.path, "-f", "s16le", "-"], executable: URL(fileURLWithPath: ffmpeg!)).data
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// Decodes `url` like `decodeS16`, to exactly the stream's length: FFmpeg 5.1's command line drops an MP4 edit
    /// list's priming but not its end, so for M4A the samples are cut at ffprobe's length (after the edit list).
    /// - Throws: when ffprobe cannot read that length.
    public static func decodeS16Exact(_ url: URL, channels: Int) throws -> [Int16] {
        let decoded = try decodeS16(url)
        guard url.pathExtension == "m4a" else { return decoded }
        let frames = try streamDurationFrames(url)
        guard frames >= 0 else { throw RefereeFailure(description: "ffprobe reads no length from \(url.lastPathComponent)") }
        return Array(decoded.prefix(min(frames, decoded.count / channels) * channels))
    }

    /// A referee that could not give its answer.
    public struct RefereeFailure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The stream length ffprobe reports (`duration_ts`, after the MP4 edit list), in frames at the stream rate.
    public static func streamDurationFrames(_ url: URL) throws -> Int {
        let run = try ToolRun(
            ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", url.path],
            executable: URL(fileURLWithPath: ffmpeg!.replacingOccurrences(of: "ffmpeg", with: "ffprobe")))
        return Int(run.output) ?? -1
    }

    /// Integrated loudness (LUFS) and true peak (dBTP) of a file as FFmpeg's own `ebur128` filter measures them (its
    /// summary), a meter independent of libebur128 and of Chorus's.
    public static func ebur128(_ url: URL) async throws -> (integrated: Double, truePeak: Double) {
        let run = try await ToolRun.run([ffmpeg!, "-nostats", "-hide_banner", "-i", url.path, "-af", "ebur128=peak=true", "-f", "null", "-"])
        guard run.status == 0, let summary = run.errors.range(of: "Summary:") else {
            throw RefereeFailure(description: "ffmpeg ebur128 failed on \(url.lastPathComponent): \(run.errors.suffix(400))")
        }
        func value(after label: String) -> Double? {
            run.errors[summary.upperBound...].split(separator: "\n").lazy
                .compactMap { line -> Double? in
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    guard trimmed.hasPrefix(label) else { return nil }
                    return Double(trimmed.dropFirst(label.count).split(separator: " ").first ?? "")
                }.first
        }
        guard let integrated = value(after: "I:"), let peak = value(after: "Peak:") else {
            throw RefereeFailure(description: "no loudness in ffmpeg's summary for \(url.lastPathComponent)")
        }
        return (integrated, peak)
    }

    /// One chapter as ffprobe reads it.
    public struct Chapter: Sendable {
        public var start: Double
        public var end: Double
        public var title: String
    }

    /// The chapters ffprobe reads from `url` (`-show_chapters`), in order (ffprobe waited for on a thread of its own).
    public static func chapters(_ url: URL) async throws -> [Chapter] {
        try await offCooperativeThreads { try readChapters(url) }
    }

    private static func readChapters(_ url: URL) throws -> [Chapter] {
        let data = try ToolRun(
            ["-v", "error", "-show_chapters", "-of", "json", url.path],
            executable: URL(fileURLWithPath: ffmpeg!.replacingOccurrences(of: "ffmpeg", with: "ffprobe"))
        ).data
        struct Report: Decodable {
            struct Entry: Decodable {
                var start_time: String
                var end_time: String
                var tags: [String: String]?
            }
            var chapters: [Entry]?
        }
        return try JSONDecoder().decode(Report.self, from: data).chapters?.map {
            Chapter(start: Double($0.start_time) ?? -1, end: Double($0.end_time) ?? -1, title: $0.tags?["title"] ?? "")
        } ?? []
    }

    /// Frames ffmpeg decodes from `url`.
    public static func decodedFrames(_ url: URL, channels: Int) throws -> Int {
        try decodeS16(url).count / channels
    }
}

/// A minimal RIFF/WAVE reader for 16-bit PCM, independent of FFmpeg and libsndfile.
public enum WAVReference {
    public struct Contents {
        public var sampleRate: Int
        public var channels: Int
        public var samples: [Int16]
    }

    public static func read(_ url: URL) throws -> Contents {
        let data = try Data(contentsOf: url)
        func u32(_ offset: Int) -> Int { Int(data[offset]) | Int(data[offset + 1]) << 8 | Int(data[offset + 2]) << 16 | Int(data[offset + 3]) << 24 }
        func u16(_ offset: Int) -> Int { Int(data[offset]) | Int(data[offset + 1]) << 8 }
        var offset = 12
        var rate = 0
        var channels = 0
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            if id == "fmt " {
                channels = u16(offset + 10)
                rate = u32(offset + 12)
            } else if id == "data" {
                let body = data[(offset + 8)..<min(data.count, offset + 8 + size)]
                let samples = body.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
                return Contents(sampleRate: rate, channels: channels, samples: samples)
            }
            offset += 8 + size + (size & 1)
        }
        throw AudioError(.corrupt, subject: url.path, reason: "no data chunk")
    }
}

/// Loudness of a slice of decoded audio, measured with libebur128 including true peak (the referee for normalization).
public func referenceLoudness(_ buffer: AudioBuffer) throws -> (integrated: Double?, truePeak: Double) {
    let meter = try LoudnessMeter(format: buffer.format, truePeak: true)
    try buffer.samples.withUnsafeBufferPointer { try meter.add($0) }
    return (try meter.integratedLoudness(), try meter.truePeak())
}

/// Zero crossings per second of the first channel while it sounds (codec delay and padding excluded):
/// 2 × frequency for a pure tone.
public func zeroCrossingRate(_ buffer: AudioBuffer) -> Double {
    let channels = buffer.format.channels
    let threshold = buffer.peak * 0.2
    let loud = (0..<buffer.frameCount).filter { abs(buffer.samples[$0 * channels]) > threshold }
    guard let first = loud.first, let last = loud.last, last > first else { return 0 }
    var crossings = 0
    var previous = buffer.samples[first * channels]
    for frame in (first + 1)...last {
        let value = buffer.samples[frame * channels]
        if (previous < 0) != (value < 0) { crossings += 1 }
        previous = value
    }
    return Double(crossings) / (Double(last - first) / Double(buffer.format.sampleRate))
}

/// Expects `body` to throw an `AudioError` with `code` whose description contains every fragment.
/// Runs `body` and checks that it throws an `E` (a layer's own error type) whose description mentions every fragment;
/// the error, for further checks.
@discardableResult
public func expectError<E: Error & CustomStringConvertible>(
    _ errorType: E.Type, mentioning fragments: [String], sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> E? {
    do {
        try await body()
        Issue.record("expected \(E.self), got no error", sourceLocation: sourceLocation)
    } catch let error as E {
        for fragment in fragments {
            #expect(error.description.contains(fragment), "“\(error)” should mention “\(fragment)”", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record("expected \(E.self), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

public func expectAudioError(
    _ code: AudioError.Code, mentioning fragments: [String], sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async {
    do {
        try await body()
        Issue.record("expected an error \(code), got none", sourceLocation: sourceLocation)
    } catch let error as AudioError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(error.description.contains(fragment), "“\(error)” should mention “\(fragment)”", sourceLocation: sourceLocation)
        }
    } catch {
        Issue.record("expected AudioError, got \(error)", sourceLocation: sourceLocation)
    }
}

/// audiowaveform's algorithm, written out plainly: average channels (C integer division),
/// min/max per block of `samplesPerPixel` frames, final partial block included.
public func audiowaveformReference(_ samples: [Int16], channels: Int, samplesPerPixel: Int) -> [Int] {
    var out: [Int] = []
    let frames = samples.count / channels
    var start = 0
    while start < frames {
        let end = min(frames, start + samplesPerPixel)
        var low = Int.max
        var high = Int.min
        for frame in start..<end {
            var sum = 0
            for channel in 0..<channels { sum += Int(samples[frame * channels + channel]) }
            let value = sum / channels
            low = min(low, value)
            high = max(high, value)
        }
        out += [low, high]
        start = end
    }
    return out
}

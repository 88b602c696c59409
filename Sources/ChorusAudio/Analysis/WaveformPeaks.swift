public import Foundation

/// How many audio frames each waveform point covers.
public enum WaveformZoom: Sendable, Equatable, Encodable {
    /// Frames per point (audiowaveform `--zoom`), at least 2.
    case samplesPerPixel(Int)
    /// Points per second (audiowaveform `--pixels-per-second`): `samplesPerPixel = sampleRate / n`.
    case pixelsPerSecond(Int)

    /// Frames per point at `sampleRate`.
    /// - Throws: `AudioError.invalidArgument` about `samples_per_pixel` / `pixels_per_second` when the result is
    ///   below `WaveformOptions.minimumSamplesPerPixel` (audiowaveform's minimum).
    public func samplesPerPixel(sampleRate: Int) throws -> Int {
        let minimum = WaveformOptions.minimumSamplesPerPixel
        switch self {
        case .samplesPerPixel(let count):
            guard count >= minimum else { throw AudioError.invalid("samples_per_pixel", count, "must be at least \(minimum)") }
            return count
        case .pixelsPerSecond(let count):
            guard count > 0 else { throw AudioError.invalid("pixels_per_second", count, "must be greater than zero") }
            let value = sampleRate / count
            guard value >= minimum else {
                throw AudioError.invalid(
                    "pixels_per_second", count,
                    "gives \(value) samples per pixel at \(sampleRate) Hz; the minimum is \(minimum)")
            }
            return value
        }
    }
}

/// Waveform peaks in BBC audiowaveform's data model: one (min, max) pair of 16-bit values per
/// point, serialised as audiowaveform's JSON (version 2) or binary `.dat`, at 8 or 16 bits.
/// peaks.js, waveform-data.js and wavesurfer.js read them unchanged.
///
/// ```swift
/// let json = peaks.jsonData(bits: 8)   // {"version":2,"channels":1,"sample_rate":44100,...}
/// let dat = peaks.datData(bits: 8)     // 20-byte header (version 1, mono) + int8 pairs
/// ```
public struct WaveformPeaks: Sendable, Equatable {
    /// Sample rate of the audio the peaks describe.
    public var sampleRate: Int
    /// Frames per point.
    public var samplesPerPixel: Int
    /// Channels in `data` (1: all input channels averaged, as audiowaveform does by default).
    public var channels: Int
    /// Interleaved `min, max` pairs per point (per channel), as 16-bit values.
    public var data: [Int16]

    public init(sampleRate: Int, samplesPerPixel: Int, channels: Int, data: [Int16]) {
        self.sampleRate = sampleRate
        self.samplesPerPixel = samplesPerPixel
        self.channels = channels
        self.data = data
    }

    /// Number of points per channel.
    public var length: Int { data.count / (2 * channels) }

    /// Values at `bits` resolution: 16-bit as is, 8-bit divided by 256 truncating toward zero (as audiowaveform).
    public func values(bits: Int) -> [Int] {
        bits == 8 ? data.map { Int($0) / 256 } : data.map { Int($0) }
    }

    /// audiowaveform's JSON format.
    public func jsonData(bits: Int) -> Data {
        var text =
            "{\"version\":2,\"channels\":\(channels),\"sample_rate\":\(sampleRate),"
            + "\"samples_per_pixel\":\(samplesPerPixel),\"bits\":\(bits),\"length\":\(length),\"data\":["
        text.reserveCapacity(text.utf8.count + data.count * 5)
        var first = true
        for value in values(bits: bits) {
            if !first { text += "," }
            first = false
            text += String(value)
        }
        text += "]}\n"
        return Data(text.utf8)
    }

    /// audiowaveform's binary `.dat` format (little-endian; version 1 for mono, 2 with a channel count otherwise).
    public func datData(bits: Int) -> Data {
        var bytes = Data()
        bytes.reserveCapacity(24 + data.count * (bits / 8))
        func int32(_ value: Int) {
            withUnsafeBytes(of: Int32(truncatingIfNeeded: value).littleEndian) { bytes.append(contentsOf: $0) }
        }
        int32(channels == 1 ? 1 : 2)
        int32(bits == 8 ? 1 : 0)
        int32(sampleRate)
        int32(samplesPerPixel)
        int32(length)
        if channels != 1 { int32(channels) }
        if bits == 8 {
            for value in data { bytes.append(UInt8(bitPattern: Int8(Int(value) / 256))) }
        } else {
            for value in data { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        }
        return bytes
    }

    /// The peaks as `format` writes them.
    public func data(_ format: WaveformFileFormat, bits: Int) -> Data {
        switch format {
        case .json: return jsonData(bits: bits)
        case .dat: return datData(bits: bits)
        }
    }
}

/// The files peaks are written as, audiowaveform's: `.json` and binary `.dat`. The one owner of the rule a file name
/// picks one of them by.
public enum WaveformFileFormat: String, Sendable, CaseIterable {
    case json, dat

    /// The format `url`'s extension names (case-insensitive).
    /// - Throws: `AudioError.invalidArgument` naming the file when it is neither `.json` nor `.dat`.
    public init(url: URL) throws {
        guard let format = WaveformFileFormat(rawValue: url.pathExtension.lowercased()) else {
            throw AudioError(.invalidArgument, subject: url.path, reason: "waveform output must end in .json or .dat")
        }
        self = format
    }
}

/// Output settings for waveform peaks: the one owner of their ranges and defaults.
public struct WaveformOptions: Sendable, Equatable, Encodable {
    /// audiowaveform's default zoom.
    public static let defaultSamplesPerPixel = 256
    /// The smallest zoom audiowaveform accepts.
    public static let minimumSamplesPerPixel = 2
    /// Resolutions: 8 bits (what peaks.js reads) or 16.
    public static let allowedBits = [8, 16]
    /// audiowaveform's default resolution.
    public static let defaultBits = 16

    public var zoom: WaveformZoom
    /// 8 or 16.
    public var bits: Int

    public init(zoom: WaveformZoom = .samplesPerPixel(WaveformOptions.defaultSamplesPerPixel), bits: Int = WaveformOptions.defaultBits) {
        self.zoom = zoom
        self.bits = bits
    }

    /// Checks `bits` and the zoom at `sampleRate`.
    /// - Throws: `AudioError.invalidArgument` about `bits`, `samples_per_pixel` or `pixels_per_second`.
    public func validate(sampleRate: Int) throws {
        guard Self.allowedBits.contains(bits) else { throw AudioError.invalid("bits", bits, "must be 8 or 16") }
        _ = try zoom.samplesPerPixel(sampleRate: sampleRate)
    }

}

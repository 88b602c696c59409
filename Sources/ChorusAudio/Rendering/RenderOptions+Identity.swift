public import ChorusWire
import Foundation

extension RenderOptions {
    /// Settings that do not change what a render sounds like, only how it is computed or what is written beside it:
    /// left out of `identity(for:)`. (`jobs` and `serialEncode` choose between encoding in pieces and with one
    /// encoder: the bytes differ within codec noise, the content does not.)
    public static let notShapingOutput: Set<String> = ["jobs", "serialEncode", "waveform"]

    /// Everything that shapes the audio of a render to `format`, by setting name: every stored setting (read by
    /// encoding the whole value, so a setting added to `RenderOptions` is part of the identity unless it is listed in
    /// `notShapingOutput`) with the sample rate resolved for the format, and without settings that have no effect
    /// there (loudness target and ceiling without normalization, the bit rate of lossless output, LAME's quality for
    /// anything but MP3, the trimmer's parameters without trimming). Equal identities give equal audio.
    public func identity(for format: OutputFileFormat) -> [String: JSONValue] {
        var resolved = self
        resolved.sampleRate = outputFormat(for: format).sampleRate
        guard let data = try? JSONEncoder().encode(resolved), case .object(var fields)? = try? JSONDecoder().decode(JSONValue.self, from: data) else {
            preconditionFailure("RenderOptions encodes as a JSON object")
        }
        for name in Self.notShapingOutput { fields[name] = nil }
        if !normalize {
            fields["targetLoudness"] = nil
            fields["truePeakCeiling"] = nil
        }
        if !format.isLossy { fields["bitRate"] = nil }
        if format != .mp3 { fields["mp3Quality"] = nil }
        if !trimSilence { fields["trimmer"] = nil }
        return fields
    }
}

import Foundation

/// A Flite voice spec: `slt`, `rms`, `awb`, `kal16` or `kal`, with optional `?rate=0.7…1.5` (speaking
/// rate, 1 = the voice's own) and `?pitch=0.75…1.35` (times the voice's mean pitch; `rms` ignores it).
struct FliteVoice: Sendable, Equatable {
    struct Info: Sendable {
        var libraryName: String
        var name: String
        var gender: String
        var accent: String
        /// The voice's own mean F0 in Hz (what `pitch` multiplies).
        var f0Mean: Double
    }

    static let catalog: [String: Info] = [
        "slt": Info(libraryName: "cmu_us_slt", name: "SLT", gender: "female", accent: "en-US", f0Mean: 172),
        "rms": Info(libraryName: "cmu_us_rms", name: "RMS", gender: "male", accent: "en-US", f0Mean: 98),
        "awb": Info(libraryName: "cmu_us_awb", name: "AWB", gender: "male", accent: "en-GB (Scottish)", f0Mean: 132),
        "kal16": Info(libraryName: "cmu_us_kal16", name: "Kal (16 kHz diphone)", gender: "male", accent: "en-US", f0Mean: 95),
        "kal": Info(libraryName: "cmu_us_kal", name: "Kal (8 kHz diphone)", gender: "male", accent: "en-US", f0Mean: 95),
    ]
    static let order = ["slt", "rms", "awb", "kal16", "kal"]
    static let rateRange = 0.7...1.5
    static let pitchRange = 0.75...1.35

    /// What voice `spec` sounds like (`nil` for no Flite voice).
    static func sounds(of spec: String) -> VoiceSound? {
        let name = spec.prefix { $0 != "?" }.lowercased().replacingOccurrences(of: "cmu_us_", with: "")
        return catalog[name].flatMap { VoiceSound(rawValue: $0.gender) }
    }

    var name: String
    var rate: Double?
    var pitch: Double?

    /// Parses `slt?rate=1.1&pitch=0.9`.
    /// - Throws: `VoiceError.voiceNotFound` for an unknown voice, `.badRequest` for a bad or out-of-range parameter.
    init(parsing spec: String) throws {
        let parts = spec.split(separator: "?", maxSplits: 1).map(String.init)
        let name = parts.first?.lowercased().replacingOccurrences(of: "cmu_us_", with: "") ?? ""
        guard Self.catalog[name] != nil else {
            throw VoiceError(.voiceNotFound, provider: "flite", message: "no Flite voice \"\(spec)\" (use \(Self.order.joined(separator: ", ")))")
        }
        self.name = name
        for pair in (parts.count > 1 ? parts[1] : "").split(separator: "&") {
            let keyValue = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard keyValue.count == 2, let value = Double(keyValue[1]), value.isFinite else {
                throw VoiceError(.badRequest, provider: "flite", message: "\"\(pair)\" in \"\(spec)\" is not name=number")
            }
            switch keyValue[0] {
            case "rate" where Self.rateRange.contains(value): rate = value
            case "pitch" where Self.pitchRange.contains(value): pitch = value
            case "rate", "pitch":
                let range = keyValue[0] == "rate" ? Self.rateRange : Self.pitchRange
                throw VoiceError(
                    .badRequest, provider: "flite",
                    message: "\(pair) in \"\(spec)\": \(keyValue[0]) must be between \(range.lowerBound) and \(range.upperBound)")
            default:
                throw VoiceError(.badRequest, provider: "flite", message: "unknown parameter \"\(keyValue[0])\" in \"\(spec)\" (use rate, pitch)")
            }
        }
    }
}

import ArgumentParser

/// `128k`, `128K`, `128kbps`, `96000`, or a bare number under 1000 taken as kbit/s.
struct BitRate: ExpressibleByArgument {
    var bitsPerSecond: Int

    init(bitsPerSecond: Int) { self.bitsPerSecond = bitsPerSecond }

    init?(argument: String) {
        var text = argument.lowercased()
        if text.hasSuffix("bps") { text.removeLast(3) }
        var multiplier = 1
        if text.hasSuffix("k") {
            text.removeLast()
            multiplier = 1000
        }
        guard let value = Int(text), value > 0 else { return nil }
        bitsPerSecond = multiplier == 1000 || value < 1000 ? value * 1000 : value
    }

    var defaultValueDescription: String { "\(bitsPerSecond / 1000)k" }
}

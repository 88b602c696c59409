import Foundation

/// A small seeded generator (SplitMix64): the same seed, the same numbers, on every machine. What Chorus draws with
/// where results must repeat (Whisper's sampling, voice creation's search).
package struct SplitMix64: RandomNumberGenerator, Sendable {
    package var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in [0, 1).
    package mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// A number from the standard normal distribution (Box–Muller, one of the pair).
    package mutating func normal() -> Double {
        let u = max(unit(), 1e-300)
        let v = unit()
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }
}

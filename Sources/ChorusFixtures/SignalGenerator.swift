public import ChorusAudio
import ChorusSupport
import Foundation

/// Deterministic test and benchmark signals: tones, silence, ramps and a speech-like voice.
///
/// ```swift
/// let tone = SignalGenerator.tone(frequency: 440, amplitude: 0.5, seconds: 1, format: .speech)
/// let voice = SignalGenerator.speechLike(fundamental: 180, seconds: 4, format: .speech, seed: 7)
/// ```
public enum SignalGenerator {
    /// A sine tone, the same in every channel.
    public static func tone(frequency: Double, amplitude: Double, seconds: Double, format: AudioFormat) -> AudioBuffer {
        let frames = format.frames(seconds: seconds)
        var samples = [Float](repeating: 0, count: frames * format.channels)
        let step = 2 * Double.pi * frequency / Double(format.sampleRate)
        for frame in 0..<frames {
            let value = Float(amplitude * sin(step * Double(frame)))
            for channel in 0..<format.channels { samples[frame * format.channels + channel] = value }
        }
        return AudioBuffer(format: format, samples: samples)
    }

    /// Digital silence.
    public static func silence(seconds: Double, format: AudioFormat) -> AudioBuffer {
        AudioBuffer(format: format, samples: [Float](repeating: 0, count: format.frames(seconds: seconds) * format.channels))
    }

    /// A linear ramp from `from` to `to` over the buffer, the same in every channel.
    public static func ramp(from: Float, to: Float, frames: Int, format: AudioFormat) -> AudioBuffer {
        var samples = [Float](repeating: 0, count: frames * format.channels)
        for frame in 0..<frames {
            let value = from + (to - from) * Float(frame) / Float(max(1, frames - 1))
            for channel in 0..<format.channels { samples[frame * format.channels + channel] = value }
        }
        return AudioBuffer(format: format, samples: samples)
    }

    /// `parts` one after another (all in the first part's format).
    public static func concatenate(_ parts: [AudioBuffer]) -> AudioBuffer {
        AudioBuffer(format: parts[0].format, samples: parts.flatMap(\.samples))
    }

    /// A voice-like signal: a harmonic series on a wandering fundamental, shaped into syllables
    /// (~4 per second) with short pauses, so trimming, loudness and codecs behave as with speech.
    public static func speechLike(
        fundamental: Double, seconds: Double, format: AudioFormat, seed: UInt64,
        amplitude: Double = 0.5
    ) -> AudioBuffer {
        var random = SplitMix(seed: seed)
        let frames = format.frames(seconds: seconds)
        let rate = Double(format.sampleRate)
        var samples = [Float](repeating: 0, count: frames * format.channels)
        var phase = 0.0
        var syllableEnd = 0
        var syllableStart = 0
        var syllableLevel = 0.0
        var pitch = fundamental
        let harmonics = max(1, min(12, Int(rate / 2 / fundamental) - 1))
        for frame in 0..<frames {
            if frame >= syllableEnd {
                let pause = random.next() < 0.2 ? Int(rate * (0.08 + 0.15 * random.next())) : Int(rate * 0.02)
                syllableStart = frame + pause
                syllableEnd = syllableStart + Int(rate * (0.12 + 0.18 * random.next()))
                syllableLevel = 0.5 + 0.5 * random.next()
                pitch = fundamental * (0.85 + 0.3 * random.next())
            }
            var envelope = 0.0
            if frame >= syllableStart {
                let position = Double(frame - syllableStart) / Double(max(1, syllableEnd - syllableStart))
                envelope = syllableLevel * sin(Double.pi * position)
            }
            phase += 2 * Double.pi * pitch / rate
            if phase > 2 * Double.pi { phase -= 2 * Double.pi }
            var value = 0.0
            for harmonic in 1...harmonics {
                value += sin(phase * Double(harmonic)) / Double(harmonic)
            }
            let sample = Float(amplitude * 0.6 * envelope * value)
            for channel in 0..<format.channels { samples[frame * format.channels + channel] = sample }
        }
        return AudioBuffer(format: format, samples: samples)
    }
}

/// A small deterministic random generator (SplitMix64, `ChorusSupport`'s): values in [0, 1).
public struct SplitMix {
    private var generator: SplitMix64

    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    /// A value in [0, 1).
    public mutating func next() -> Double { generator.unit() }
}

import Foundation

/// A look-ahead peak limiter: keeps every sample at or below `ceiling` with a gain that ramps down
/// over the look-ahead window before a peak and recovers with an exponential release after it.
///
/// Channels are linked (one gain per frame), so the stereo image does not shift.
///
/// ```swift
/// var limiter = PeakLimiter(format: clip.format, ceiling: 0.84)
/// clip.samples.withUnsafeMutableBufferPointer { limiter.process($0) }
/// ```
public struct PeakLimiter: Sendable {
    public var format: AudioFormat
    /// Linear sample ceiling (e.g. 0.84 ≈ −1.5 dBFS).
    public var ceiling: Float
    /// Look-ahead (and attack) in milliseconds.
    public var lookAheadMilliseconds: Int
    /// Release time constant in milliseconds.
    public var releaseMilliseconds: Int

    public init(format: AudioFormat, ceiling: Float, lookAheadMilliseconds: Int = 5, releaseMilliseconds: Int = 40) {
        self.format = format
        self.ceiling = ceiling
        self.lookAheadMilliseconds = lookAheadMilliseconds
        self.releaseMilliseconds = releaseMilliseconds
    }

    /// Limits interleaved samples in place. Returns the deepest gain reduction applied, in dB (≤ 0).
    ///
    /// The gain per frame is `min(attack, release, needed)`: `needed` is `ceiling / peak` for a frame over the
    /// ceiling (else 1); `attack` is the moving average, over the look-ahead window, of the smallest `needed`
    /// in the window ahead — so the gain is already down when the peak arrives, and never jumps; `release`
    /// recovers exponentially towards 1. Attack and needed differ from 1 only within one window of a frame over
    /// the ceiling, so the full computation runs only in those regions (about a tenth of limited speech); in
    /// between, the gain is the release curve alone, applied in closed form, and skipped once it is back at 1.
    @discardableResult
    public func process(_ samples: UnsafeMutableBufferPointer<Float>) -> Double {
        process(UnsafeBufferPointer(samples), scaledBy: 1, into: samples, blockPeaks: nil)
    }

    /// Frames per block of `blockPeaks`.
    static let blockFrames = 64

    /// The largest magnitude over all channels of each 64-frame block of interleaved `samples`: computed once for a
    /// clip limited at several gains (`process(_:scaledBy:into:blockPeaks:)`), so no round scans the clip again.
    static func blockPeaks(_ samples: UnsafeBufferPointer<Float>, channels: Int) -> [Float] {
        let frames = samples.count / channels
        let blocks = (frames + blockFrames - 1) / blockFrames
        guard let base = samples.baseAddress else { return [] }
        return [Float](unsafeUninitializedCapacity: blocks) { peaks, count in
            for block in 0..<blocks {
                let first = block * blockFrames
                if channels == 1 && first + blockFrames <= frames {
                    // A tree of maxima rather than a chain: independent steps overlap.
                    @inline(__always) func four(_ offset: Int) -> SIMD4<Float> { SIMD4(loading: base, offset: first + offset).magnitudes }
                    var low = four(0).larger(four(4))
                    var high = four(8).larger(four(12))
                    for offset in stride(from: 16, to: blockFrames, by: 16) {
                        low = low.larger(four(offset).larger(four(offset + 4)))
                        high = high.larger(four(offset + 8).larger(four(offset + 12)))
                    }
                    peaks[block] = low.larger(high).largest
                } else {
                    var peak: Float = 0
                    for index in first * channels..<min(frames, first + blockFrames) * channels { peak = max(peak, abs(base[index])) }
                    peaks[block] = peak
                }
            }
            count = blocks
        }
    }

    /// Limits `source × scale` into `output` (the same length; it may be `source` itself) in one pass, with the same
    /// result, to the bit, as scaling first and limiting in place (every float operation in the same order). `blockPeaks` (from `blockPeaks(_:channels:)` of
    /// `source`) spares the scan for frames over the ceiling. Returns the deepest gain reduction, in dB (≤ 0).
    func process(
        _ source: UnsafeBufferPointer<Float>, scaledBy scale: Float, into output: UnsafeMutableBufferPointer<Float>,
        blockPeaks: [Float]?
    ) -> Double {
        let channels = format.channels
        let frames = source.count / channels
        precondition(output.count >= frames * channels, "limiter output shorter than its input")
        guard frames > 0, let input = source.baseAddress, let base = output.baseAddress else { return 0 }
        let window = max(1, format.frames(milliseconds: lookAheadMilliseconds))
        let peaks = blockPeaks ?? Self.blockPeaks(source, channels: channels)
        precondition(peaks.count == (frames + Self.blockFrames - 1) / Self.blockFrames, "block peaks of another clip")
        precondition(scale >= 0, "negative limiter scale")

        // Which 64-frame blocks have a frame over the ceiling (`over`), and the gain each frame needs on its own
        // (ceiling / peak, or 1), computed only where a region reads it: in blocks over the ceiling at once, in the
        // other blocks of a region (ones) when the region is limited. Most blocks are neither. `|x|·scale` is what
        // scaling first would give, bit for bit, and so is `peak·scale` for the block's largest.
        let needed = UnsafeMutableBufferPointer<Float>.allocate(capacity: frames)
        defer { needed.deallocate() }
        let blocks = peaks.count
        let blockState = UnsafeMutableBufferPointer<BlockState>.allocate(capacity: blocks)
        defer { blockState.deallocate() }
        let ceiling = self.ceiling
        var anyOver = false
        for block in 0..<blocks {
            let over = peaks[block] * scale > ceiling
            blockState[block] = over ? .over : .unset
            guard over else { continue }
            anyOver = true
            let first = block * Self.blockFrames
            let count = min(Self.blockFrames, frames - first)
            if channels == 1 && count == Self.blockFrames {
                let ceilings = SIMD8<Float>(repeating: ceiling)
                for offset in stride(from: 0, to: Self.blockFrames, by: 8) {
                    let magnitudes = (SIMD8(loading: input, offset: first + offset) * scale).magnitudes
                    UnsafeMutableRawPointer(needed.baseAddress! + first + offset)
                        .storeBytes(of: ceilings / ceilings.larger(magnitudes), as: SIMD8<Float>.self)
                }
            } else {
                for frame in first..<first + count {
                    var peak: Float = 0
                    for channel in 0..<channels { peak = max(peak, abs(input[frame &* channels &+ channel] * scale)) }
                    needed[frame] = ceiling / max(peak, ceiling)
                }
            }
        }
        var state = State(
            window: window, release: Float(exp(-1.0 / (Double(format.sampleRate) * Double(releaseMilliseconds) / 1000))),
            frames: frames, channels: channels, input: input, scale: scale, output: base)
        defer { state.deallocate() }
        guard anyOver else {
            state.release(from: 0, to: frames)
            return 0
        }
        /// Ones for the blocks of frames `start ..< end` whose `needed` was not computed.
        func prepare(from start: Int, to end: Int) {
            guard start < end else { return }
            for block in start / Self.blockFrames...(end - 1) / Self.blockFrames where blockState[block] == .unset {
                let first = block * Self.blockFrames
                (needed.baseAddress! + first).update(repeating: 1, count: min(Self.blockFrames, frames - first))
                blockState[block] = .computed
            }
        }

        // Regions: frames within one window of a frame over the ceiling, merged when they touch.
        var frame = 0
        var regionStart = -1
        var regionEnd = -1
        for block in 0..<blocks where blockState[block] == .over {
            for over in block * Self.blockFrames..<min(frames, (block + 1) * Self.blockFrames) where needed[over] < 1 {
                let start = max(0, over - window + 1)
                let end = min(frames, over + window)
                if regionStart >= 0 && start <= regionEnd {
                    regionEnd = end
                    continue
                }
                if regionStart >= 0 {
                    state.release(from: frame, to: regionStart)
                    prepare(from: regionStart, to: regionEnd)
                    state.limit(needed: needed, from: regionStart, to: regionEnd)
                    frame = regionEnd
                }
                regionStart = start
                regionEnd = end
            }
        }
        state.release(from: frame, to: regionStart)
        prepare(from: regionStart, to: regionEnd)
        state.limit(needed: needed, from: regionStart, to: regionEnd)
        state.release(from: regionEnd, to: frames)
        return 20 * log10(Double(state.deepest))
    }

    /// Whether a block's `needed` values exist: `over` (computed; a frame is over the ceiling), `computed`, or `unset`.
    private enum BlockState: UInt8 {
        case unset, computed, over
    }

    /// The gain carried from region to region, and where it reads and writes.
    private struct State {
        let window: Int
        let channels: Int
        /// `output = input × scale × gain`, frame by frame (`output` may be `input`).
        let input: UnsafePointer<Float>
        let scale: Float
        let output: UnsafeMutablePointer<Float>
        /// Whether frames with a gain of 1 must still be written (else they are already `input × scale` in `output`).
        let writesAll: Bool
        /// Per-frame release factor: `1 − gain` shrinks by it each frame.
        let release: Float
        /// `ahead` for the frames of the region being limited.
        let ahead: UnsafeMutableBufferPointer<Float>
        /// `releaseᵏ` for k = 1…8.
        let powers: SIMD8<Float>
        /// `1 − gain` at the last frame done. Kept as the deficit rather than the gain: near 1 the gain's
        /// float spacing would stall the release (1 − d·release rounding back to 1 − d for d < 5e-5).
        var deficit: Float = 0
        var deepest: Float = 1

        init(
            window: Int, release: Float, frames: Int, channels: Int, input: UnsafePointer<Float>, scale: Float,
            output: UnsafeMutablePointer<Float>
        ) {
            self.window = window
            self.channels = channels
            self.input = input
            self.scale = scale
            self.output = output
            writesAll = scale != 1 || UnsafePointer(output) != input
            self.release = release
            var powers = SIMD8<Float>(repeating: 1)
            var power: Float = 1
            for lane in 0..<8 {
                power *= release
                powers[lane] = power
            }
            self.powers = powers
            ahead = .allocate(capacity: frames)
        }

        func deallocate() { ahead.deallocate() }

        /// Frames `start ..< end` lie outside every region: attack and needed are 1, so the gain is the
        /// release curve `1 − deficit·releaseᵏ`, applied until it rounds to 1; after that the gain is 1.
        mutating func release(from start: Int, to end: Int) {
            var frame = start
            // Eight frames per step: their deficits are `deficit · releaseᵏ`, k = 1…8.
            while frame + 8 <= end && deficit > 1e-8 {
                let deficits = deficit * powers
                let gains = 1 - deficits
                if channels == 1 {
                    let scaled = SIMD8(loading: input, offset: frame) * scale
                    UnsafeMutableRawPointer(output + frame).storeBytes(of: scaled * gains, as: SIMD8<Float>.self)
                } else {
                    for lane in 0..<8 {
                        for channel in 0..<channels {
                            let index = (frame &+ lane) &* channels &+ channel
                            output[index] = input[index] * scale * gains[lane]
                        }
                    }
                }
                deficit = deficits[7]
                frame += 8
            }
            while frame < end && deficit > 1e-8 {
                deficit *= release
                for channel in 0..<channels {
                    let index = frame &* channels &+ channel
                    output[index] = input[index] * scale * (1 - deficit)
                }
                frame += 1
            }
            if deficit <= 1e-8 { deficit = 0 }
            if writesAll && frame < end {
                for index in frame &* channels..<end &* channels { output[index] = input[index] * scale }
            }
        }

        /// Frames `start ..< end` form one region: the full attack / release / needed computation.
        mutating func limit(needed: UnsafeMutableBufferPointer<Float>, from start: Int, to end: Int) {
            guard start < end else { return }
            let count = end - start
            // `ahead[n]`, the minimum of `needed` over n ..< n + window, from the frames over the ceiling (a few
            // percent of the region's): each lowers the window of frames before it, eight at a time.
            let ahead = self.ahead.baseAddress!
            ahead.initialize(repeating: 1, count: count)
            for over in start..<end where needed[over] < 1 {
                let value = SIMD8<Float>(repeating: needed[over])
                var index = max(start, over - window + 1) - start
                let last = over - start
                while index + 8 <= last + 1 {
                    let current = SIMD8(loading: ahead, offset: index)
                    let excess = current - value  // min(current, value) = current − relu(current − value)
                    UnsafeMutableRawPointer(ahead + index).storeBytes(of: current - (excess + excess.magnitudes) * 0.5, as: SIMD8<Float>.self)
                    index += 8
                }
                while index <= last {
                    ahead[index] = min(ahead[index], value[0])
                    index += 1
                }
            }
            // The moving average of `ahead` over the window (1 before the region), the release, and the gain.
            var sum = Double(window)
            let perWindow = 1 / Double(window)
            for index in 0..<count {
                sum += Double(ahead[index] - (index >= window ? ahead[index - window] : 1))
                let attack = Float(sum * perWindow)
                let frame = start + index
                deficit = max(1 - attack, deficit * release, 1 - needed[frame])
                let gain = 1 - deficit
                deepest = min(deepest, gain)
                for channel in 0..<channels {
                    let index = frame &* channels &+ channel
                    output[index] = input[index] * scale * gain
                }
            }
        }
    }
}

import Foundation

/// Gated integrated loudness (ITU-R BS.1770-4 / EBU R128), computed here in one streaming pass.
///
/// The same measurement as libebur128's `EBUR128_MODE_I` — K-weighting filter with the same coefficients,
/// 400 ms blocks every 100 ms, absolute gate −70 LUFS, relative gate −10 LU, the same channel weights —
/// agreeing with it to within 0.001 LU (tested against libebur128 on every sample rate), at a fraction of
/// its cost: normalization measures every clip once or more, and libebur128 was most of the loudness
/// stage's time. libebur128 stays as the tests' and benchmarks' referee (`LoudnessMeter`, in ChorusFixtures).
///
/// ```swift
/// var meter = IntegratedLoudness(format: clip.format)
/// clip.samples.withUnsafeBufferPointer { meter.add($0) }
/// meter.loudness()   // e.g. -19.7 (LUFS); nil when no block passes the gates
/// ```
public struct IntegratedLoudness: Sendable {
    public let format: AudioFormat
    private let filter: KWeighting
    private var states: [KWeighting.State]
    private let weights: [Double]
    /// Frames per 100 ms step (libebur128's rounding: `(rate + 5) / 10`).
    private let segmentFrames: Int
    /// Channel-weighted sum of squares of the K-weighted signal, per completed 100 ms segment.
    private var segments: [Double] = []
    private var partialSum = 0.0
    private var partialFrames = 0

    public init(format: AudioFormat) {
        self.format = format
        filter = KWeighting(sampleRate: Double(format.sampleRate))
        states = Array(repeating: KWeighting.State(), count: format.channels)
        weights = Self.channelWeights(format.channels)
        segmentFrames = max(1, (format.sampleRate + 5) / 10)
    }

    /// BS.1770 channel weights in libebur128's default channel order (L, R, C, LFE, Ls, Rs; 4 channels:
    /// L, R, Ls, Rs; 5: L, R, C, Ls, Rs). Channels past the sixth are weighted 1.
    static func channelWeights(_ channels: Int) -> [Double] {
        switch channels {
        case 4: return [1, 1, 1.41, 1.41]
        case 5: return [1, 1, 1, 1.41, 1.41]
        default:
            let standard: [Double] = [1, 1, 1, 0, 1.41, 1.41]
            return (0..<channels).map { $0 < standard.count ? standard[$0] : 1 }
        }
    }

    /// Adds interleaved frames (a trailing partial frame is ignored).
    public mutating func add(_ samples: UnsafeBufferPointer<Float>) {
        guard let base = samples.baseAddress else { return }
        let frames = samples.count / format.channels
        // Finish a segment begun by an earlier call, then whole segments 8 at a time when there are enough of
        // them, then the rest in order.
        var done = partialFrames > 0 ? addInOrder(base, frames: min(frames, segmentFrames - partialFrames)) : 0
        let wholeSegments = (frames - done) / segmentFrames
        if wholeSegments >= 2 * Lanes8.count {
            let perLane = wholeSegments / Lanes8.count
            addInLanes(base + done * format.channels, segmentsPerLane: perLane)
            done += Lanes8.count * perLane * segmentFrames
        }
        _ = addInOrder(base + done * format.channels, frames: frames - done)
    }

    /// Filters `frames` frames from `base` in order, segment by segment; returns `frames`.
    private mutating func addInOrder(_ base: UnsafePointer<Float>, frames: Int) -> Int {
        var done = 0
        while done < frames {
            let count = min(frames - done, segmentFrames - partialFrames)
            for channel in 0..<format.channels where weights[channel] != 0 {  // LFE (weight 0) is not measured
                let input = base + done * format.channels + channel
                partialSum += weights[channel] * filter.sumOfSquares(input, stride: format.channels, count: count, state: &states[channel])
            }
            partialFrames += count
            done += count
            if partialFrames == segmentFrames {
                segments.append(partialSum)
                partialSum = 0
                partialFrames = 0
            }
        }
        return frames
    }

    /// Filters `8 × segmentsPerLane` whole segments from `base` as 8 contiguous stretches side by side, one per
    /// lane of `Lanes8`. Lane 0 continues the channel's filter; each later lane starts from silence one segment
    /// before its stretch (in the previous lane's samples), by which time the K-filter has forgotten where it
    /// started (its slowest poles, a near-double pair at 38 Hz, leave (1 + σt)·e^(−σt) ≈ 10⁻⁹ of the amplitude after
    /// 100 ms, σ ≈ 240/s, at any rate) — the same result as one long run, to within float rounding. (Half of that,
    /// 50 ms, leaves 8·10⁻⁵: measurably different, and worth only about 3 % of the loudness stage.)
    private mutating func addInLanes(_ base: UnsafePointer<Float>, segmentsPerLane: Int) {
        let channels = format.channels
        let laneFrames = segmentsPerLane * segmentFrames
        var sums = [Double](repeating: 0, count: Lanes8.count * segmentsPerLane)
        for channel in 0..<channels where weights[channel] != 0 {
            let input = base + channel
            var lanes = KWeighting.LaneState()
            // Warm-up: lanes 1… read the segment before their stretch; lane 0 reads its first one (discarded).
            let warmUp = (0..<Lanes8.count).map { lane in max(lane * laneFrames - segmentFrames, 0) * channels }
            filter.run(&lanes, input, starts: warmUp, stride: channels, steps: segmentFrames, sums: nil)
            lanes.set(lane: 0, to: states[channel])
            sums.withUnsafeMutableBufferPointer { sums in
                for segment in 0..<segmentsPerLane {
                    var segmentSums = Lanes8(0)
                    let starts = (0..<Lanes8.count).map { lane in (lane * laneFrames + segment * segmentFrames) * channels }
                    filter.run(&lanes, input, starts: starts, stride: channels, steps: segmentFrames, sums: &segmentSums)
                    for lane in 0..<Lanes8.count {
                        sums[lane * segmentsPerLane + segment] += weights[channel] * Double(segmentSums[lane])
                    }
                }
            }
            states[channel] = lanes.state(lane: Lanes8.count - 1)
        }
        segments += sums
    }

    /// Gated integrated loudness in LUFS; `nil` when no 400 ms block passed the gates (silence, or less than 400 ms).
    public func loudness() -> Double? {
        guard segments.count >= 4 else { return nil }
        let blockFrames = Double(4 * segmentFrames)
        let absoluteGate = pow(10, (-70 + 0.691) / 10)
        var blocks: [Double] = []
        blocks.reserveCapacity(segments.count - 3)
        for index in 3..<segments.count {
            // Summed afresh rather than as a running difference, so rounding cannot build up over an hour.
            let energy = (segments[index - 3] + segments[index - 2] + segments[index - 1] + segments[index]) / blockFrames
            if energy >= absoluteGate { blocks.append(energy) }
        }
        guard !blocks.isEmpty else { return nil }
        let relativeGate = blocks.reduce(0, +) / Double(blocks.count) * 0.1
        var sum = 0.0
        var count = 0
        for energy in blocks where energy >= relativeGate {
            sum += energy
            count += 1
        }
        guard count > 0 else { return nil }
        return 10 * log10(sum / Double(count)) - 0.691
    }
}

/// The BS.1770 K-weighting filter — the high-shelf pre-filter and the RLB high-pass — with libebur128's
/// coefficients for any sample rate, as two direct-form-I biquads in single precision.
///
/// The high-pass's poles sit within 1 % of z = 1, where a float recursion `z = u − c1·z1 − c2·z2` loses
/// about 0.0006 dB of the energy to rounding; it runs instead on the state (z1, d1 = z1 − z2) with the
/// small coefficients `1 − c2` and `1 + c1 + c2` (computed in double), which keeps float within 1e-6 of double.
struct KWeighting: Sendable {
    // Pre-filter (high shelf): numerator b, denominator a (a0 = 1).
    let b0, b1, b2, a1, a2: Float
    // RLB high-pass: numerator (1, −2, 1), denominator (1, c1, c2) as e2 = 1 − c2, e12 = 1 + c1 + c2.
    let e2, e12: Float

    /// One channel's filter memory: the pre-filter's last two inputs and outputs, the high-pass's last output
    /// and its last difference.
    struct State: Sendable {
        var x1: Float = 0, x2: Float = 0, y1: Float = 0, y2: Float = 0, z1: Float = 0, d1: Float = 0
    }

    /// Eight channels' memories side by side.
    struct LaneState {
        var x1 = Lanes8(0), x2 = Lanes8(0), y1 = Lanes8(0), y2 = Lanes8(0), z1 = Lanes8(0), d1 = Lanes8(0)

        mutating func set(lane: Int, to state: State) {
            x1[lane] = state.x1
            x2[lane] = state.x2
            y1[lane] = state.y1
            y2[lane] = state.y2
            z1[lane] = state.z1
            d1[lane] = state.d1
        }

        func state(lane: Int) -> State {
            State(x1: x1[lane], x2: x2[lane], y1: y1[lane], y2: y2[lane], z1: z1[lane], d1: d1[lane])
        }
    }

    init(sampleRate: Double) {
        var f0 = 1681.974450955533
        let gain = 3.999843853973347
        var q = 0.7071752369554196
        var k = tan(Double.pi * f0 / sampleRate)
        let vh = pow(10, gain / 20)
        let vb = pow(vh, 0.4996667741545416)
        let a0 = 1 + k / q + k * k
        b0 = Float((vh + vb * k / q + k * k) / a0)
        b1 = Float(2 * (k * k - vh) / a0)
        b2 = Float((vh - vb * k / q + k * k) / a0)
        a1 = Float(2 * (k * k - 1) / a0)
        a2 = Float((1 - k / q + k * k) / a0)
        f0 = 38.13547087602444
        q = 0.5003270373238773
        k = tan(Double.pi * f0 / sampleRate)
        let c1 = 2 * (k * k - 1) / (1 + k / q + k * k)
        let c2 = (1 - k / q + k * k) / (1 + k / q + k * k)
        e2 = Float(1 - c2)
        e12 = Float(1 + c1 + c2)
    }

    /// Added to every input sample with alternating sign (a tone at the Nyquist frequency, 10⁻¹⁸ of full
    /// scale): in digital silence the filters' memories would otherwise decay into subnormal floats, which
    /// the processor handles 20–100× slower (measured: 1.6 → 30 ns a sample on clips half silence). It
    /// vanishes in the rounding of any sample above 10⁻¹⁰ and adds 10⁻³⁶ of full scale to the energy.
    static let denormalGuard: Float = 1e-18

    /// One sample through the filter (`V` is `Float` for one channel, `Lanes8` for eight); returns the output.
    @inline(__always)
    func step<V: FilterLanes>(_ x: V, _ x1: inout V, _ x2: inout V, _ y1: inout V, _ y2: inout V, _ z1: inout V, _ d1: inout V) -> V {
        // The terms that do not depend on the previous output first, so each recursion waits on one multiply
        // and one subtract.
        let y = (b0 * x + b1 * x1 + b2 * x2 - a2 * y2) - a1 * y1
        let u = y - 2 * y1 + y2
        let d = (u + d1 - e2 * d1) - e12 * z1
        let z = z1 + d
        x2 = x1
        x1 = x
        y2 = y1
        y1 = y
        z1 = z
        d1 = d
        return z
    }

    /// Filters `count` samples `stride` apart and returns the sum of squares of the output.
    func sumOfSquares(_ input: UnsafePointer<Float>, stride: Int, count: Int, state: inout State) -> Double {
        var s = state
        var total = 0.0
        var index = 0
        var tiny = Self.denormalGuard
        while index < count {
            // Float sums over at most 64 samples, then double: rounding stays below 1e-5 however long the run.
            let end = min(count, index + 64)
            var sum: Float = 0
            while index < end {
                let z = step(input[index * stride] + tiny, &s.x1, &s.x2, &s.y1, &s.y2, &s.z1, &s.d1)
                tiny = -tiny
                sum += z * z
                index += 1
            }
            total += Double(sum)
        }
        state = s
        return total
    }

    /// Runs eight lanes `steps` samples: lane `l` reads `steps` samples `stride` apart from `input + starts[l]`.
    /// Adds each lane's sum of squares of the output to `sums` when given (float sums of 64 samples, added up).
    @inline(__always)
    func run(
        _ state: inout LaneState, _ input: UnsafePointer<Float>, starts: [Int], stride: Int, steps: Int,
        sums: UnsafeMutablePointer<Lanes8>?
    ) {
        let (p0, p1, p2, p3) = (input + starts[0], input + starts[1], input + starts[2], input + starts[3])
        let (p4, p5, p6, p7) = (input + starts[4], input + starts[5], input + starts[6], input + starts[7])
        var s = state
        var index = 0
        var tiny = Self.denormalGuard
        while index < steps {
            let end = min(steps, index + 64)
            var sum = Lanes8(0)
            while index < end {
                let at = index * stride
                let z = step(
                    Lanes8(p0[at], p1[at], p2[at], p3[at], p4[at], p5[at], p6[at], p7[at]) + Lanes8(tiny),
                    &s.x1, &s.x2, &s.y1, &s.y2, &s.z1, &s.d1)
                tiny = -tiny
                sum = sum + z * z
                index += 1
            }
            sums?.pointee.accumulate(sum)
        }
        state = s
    }
}

/// What `KWeighting.step` computes with: `Float` (one channel) or `Lanes8` (eight at once).
protocol FilterLanes {
    static func + (lhs: Self, rhs: Self) -> Self
    static func - (lhs: Self, rhs: Self) -> Self
    static func * (lhs: Self, rhs: Self) -> Self
    static func * (lhs: Float, rhs: Self) -> Self
}

extension Float: FilterLanes {}

/// Eight floats operated on together. Plain fields rather than `SIMD8<Float>`: the optimizer vectorizes these
/// just as well, and unoptimized (debug, sanitizer) builds run them 4× faster than `SIMD8`'s generic operators.
struct Lanes8: FilterLanes {
    static let count = 8
    var l0, l1, l2, l3, l4, l5, l6, l7: Float

    @inline(__always) init(_ value: Float) {
        (l0, l1, l2, l3, l4, l5, l6, l7) = (value, value, value, value, value, value, value, value)
    }

    @inline(__always) init(_ l0: Float, _ l1: Float, _ l2: Float, _ l3: Float, _ l4: Float, _ l5: Float, _ l6: Float, _ l7: Float) {
        (self.l0, self.l1, self.l2, self.l3, self.l4, self.l5, self.l6, self.l7) = (l0, l1, l2, l3, l4, l5, l6, l7)
    }

    @inline(__always) static func + (lhs: Lanes8, rhs: Lanes8) -> Lanes8 {
        Lanes8(
            lhs.l0 + rhs.l0, lhs.l1 + rhs.l1, lhs.l2 + rhs.l2, lhs.l3 + rhs.l3,
            lhs.l4 + rhs.l4, lhs.l5 + rhs.l5, lhs.l6 + rhs.l6, lhs.l7 + rhs.l7)
    }

    @inline(__always) static func - (lhs: Lanes8, rhs: Lanes8) -> Lanes8 {
        Lanes8(
            lhs.l0 - rhs.l0, lhs.l1 - rhs.l1, lhs.l2 - rhs.l2, lhs.l3 - rhs.l3,
            lhs.l4 - rhs.l4, lhs.l5 - rhs.l5, lhs.l6 - rhs.l6, lhs.l7 - rhs.l7)
    }

    @inline(__always) static func * (lhs: Lanes8, rhs: Lanes8) -> Lanes8 {
        Lanes8(
            lhs.l0 * rhs.l0, lhs.l1 * rhs.l1, lhs.l2 * rhs.l2, lhs.l3 * rhs.l3,
            lhs.l4 * rhs.l4, lhs.l5 * rhs.l5, lhs.l6 * rhs.l6, lhs.l7 * rhs.l7)
    }

    @inline(__always) static func * (lhs: Float, rhs: Lanes8) -> Lanes8 {
        Lanes8(lhs * rhs.l0, lhs * rhs.l1, lhs * rhs.l2, lhs * rhs.l3, lhs * rhs.l4, lhs * rhs.l5, lhs * rhs.l6, lhs * rhs.l7)
    }

    subscript(lane: Int) -> Float {
        get {
            switch lane {
            case 0: l0
            case 1: l1
            case 2: l2
            case 3: l3
            case 4: l4
            case 5: l5
            case 6: l6
            default: l7
            }
        }
        set {
            switch lane {
            case 0: l0 = newValue
            case 1: l1 = newValue
            case 2: l2 = newValue
            case 3: l3 = newValue
            case 4: l4 = newValue
            case 5: l5 = newValue
            case 6: l6 = newValue
            default: l7 = newValue
            }
        }
    }

    mutating func accumulate(_ other: Lanes8) { self = self + other }
}

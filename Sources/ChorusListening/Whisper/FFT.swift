import Foundation

/// A complex discrete Fourier transform of one length made of the factors 2, 3, 4 and 5 (Whisper's 400 is 4·4·5·5),
/// planned once: Stockham's self-sorting decimation in frequency, one pass per factor, every twiddle factor computed
/// when the plan is made. `forward` is X[k] = Σ x[n]·e^(−2πi·kn/N). Used by one thread at a time (`RealFFT` gives each
/// caller a workspace of its own).
struct FFT: Sendable {
    let count: Int
    /// Each pass's radix, and its twiddle factors (w^(k·q) for q < m, k < radix: cos and −sin interleaved).
    private let passes: [(radix: Int, twiddles: [Float])]

    /// A plan for `count` points.
    /// - Precondition: `count` is a product of 2, 3, 4 and 5.
    init(count: Int) {
        self.count = count
        var remaining = count
        var radices: [Int] = []
        for radix in [4, 5, 3, 2] {
            while remaining % radix == 0 {
                radices.append(radix)
                remaining /= radix
            }
        }
        precondition(remaining == 1 && count > 0, "an FFT length of 2s, 3s and 5s")
        var passes: [(Int, [Float])] = []
        var n = count
        for radix in radices {
            let m = n / radix
            var twiddles = [Float](repeating: 0, count: 2 * m * radix)
            for q in 0..<m {
                for k in 0..<radix {
                    let angle = -2 * Double.pi * Double(q * k) / Double(n)
                    twiddles[2 * (q * radix + k)] = Float(cos(angle))
                    twiddles[2 * (q * radix + k) + 1] = Float(sin(angle))
                }
            }
            passes.append((radix, twiddles))
            n = m
        }
        self.passes = passes
    }

    /// Transforms `data` (`count` complex values, real and imaginary interleaved) in place; `work` is as large.
    func forward(_ data: UnsafeMutablePointer<Float>, work: UnsafeMutablePointer<Float>) {
        var x = data
        var y = work
        var n = count
        var s = 1
        for (radix, twiddles) in passes {
            let m = n / radix
            twiddles.withUnsafeBufferPointer { w in
                switch radix {
                case 4: Self.radix4(x, y, m: m, s: s, w: w.baseAddress!)
                case 5: Self.radix5(x, y, m: m, s: s, w: w.baseAddress!)
                default: Self.generic(radix, x, y, m: m, s: s, w: w.baseAddress!)
                }
            }
            swap(&x, &y)
            n = m
            s *= radix
        }
        if x != data { data.update(from: x, count: 2 * count) }
    }

    /// One radix-4 pass: y[t + s(4q + k)] = w^(kq) · Σ_r x[t + s(q + m·r)] · (−i)^(rk).
    private static func radix4(_ x: UnsafeMutablePointer<Float>, _ y: UnsafeMutablePointer<Float>, m: Int, s: Int, w: UnsafePointer<Float>) {
        for q in 0..<m {
            let w1r = w[2 * (4 * q + 1)]
            let w1i = w[2 * (4 * q + 1) + 1]
            let w2r = w[2 * (4 * q + 2)]
            let w2i = w[2 * (4 * q + 2) + 1]
            let w3r = w[2 * (4 * q + 3)]
            let w3i = w[2 * (4 * q + 3) + 1]
            for t in 0..<s {
                let a = 2 * (t + s * q)
                let b = 2 * (t + s * (q + m))
                let c = 2 * (t + s * (q + 2 * m))
                let d = 2 * (t + s * (q + 3 * m))
                let acr = x[a] + x[c]
                let aci = x[a + 1] + x[c + 1]
                let amr = x[a] - x[c]
                let ami = x[a + 1] - x[c + 1]
                let bdr = x[b] + x[d]
                let bdi = x[b + 1] + x[d + 1]
                let bmr = x[b] - x[d]
                let bmi = x[b + 1] - x[d + 1]
                // k = 0: (a+c)+(b+d); 1: (a−c) − i(b−d); 2: (a+c)−(b+d); 3: (a−c) + i(b−d)
                let y0r = acr + bdr
                let y0i = aci + bdi
                let y1r = amr + bmi
                let y1i = ami - bmr
                let y2r = acr - bdr
                let y2i = aci - bdi
                let y3r = amr - bmi
                let y3i = ami + bmr
                let o = 2 * (t + s * 4 * q)
                let step = 2 * s
                y[o] = y0r
                y[o + 1] = y0i
                y[o + step] = y1r * w1r - y1i * w1i
                y[o + step + 1] = y1r * w1i + y1i * w1r
                y[o + 2 * step] = y2r * w2r - y2i * w2i
                y[o + 2 * step + 1] = y2r * w2i + y2i * w2r
                y[o + 3 * step] = y3r * w3r - y3i * w3i
                y[o + 3 * step + 1] = y3r * w3i + y3i * w3r
            }
        }
    }

    private static let c1 = Float(cos(2 * Double.pi / 5)), c2 = Float(cos(4 * Double.pi / 5))
    private static let s1 = Float(sin(2 * Double.pi / 5)), s2 = Float(sin(4 * Double.pi / 5))

    /// One radix-5 pass (the five-point transform by its symmetric sums and differences).
    private static func radix5(_ x: UnsafeMutablePointer<Float>, _ y: UnsafeMutablePointer<Float>, m: Int, s: Int, w: UnsafePointer<Float>) {
        let c1 = Self.c1
        let c2 = Self.c2
        let s1 = Self.s1
        let s2 = Self.s2
        for q in 0..<m {
            for t in 0..<s {
                let i0 = 2 * (t + s * q)
                let i1 = 2 * (t + s * (q + m))
                let i2 = 2 * (t + s * (q + 2 * m))
                let i3 = 2 * (t + s * (q + 3 * m))
                let i4 = 2 * (t + s * (q + 4 * m))
                let ar = x[i0]
                let ai = x[i0 + 1]
                let p1r = x[i1] + x[i4]
                let p1i = x[i1 + 1] + x[i4 + 1]
                let m1r = x[i1] - x[i4]
                let m1i = x[i1 + 1] - x[i4 + 1]
                let p2r = x[i2] + x[i3]
                let p2i = x[i2 + 1] + x[i3 + 1]
                let m2r = x[i2] - x[i3]
                let m2i = x[i2 + 1] - x[i3 + 1]
                let y0r = ar + p1r + p2r
                let y0i = ai + p1i + p2i
                let t1r = ar + c1 * p1r + c2 * p2r
                let t1i = ai + c1 * p1i + c2 * p2i
                let t2r = ar + c2 * p1r + c1 * p2r
                let t2i = ai + c2 * p1i + c1 * p2i
                // −i·(s1·m1 + s2·m2) and −i·(s2·m1 − s1·m2)
                let u1r = s1 * m1i + s2 * m2i
                let u1i = -(s1 * m1r + s2 * m2r)
                let u2r = s2 * m1i - s1 * m2i
                let u2i = -(s2 * m1r - s1 * m2r)
                let o = 2 * (t + s * 5 * q)
                let step = 2 * s
                let tw = 10 * q
                @inline(__always) func put(_ k: Int, _ vr: Float, _ vi: Float) {
                    let wr = w[tw + 2 * k]
                    let wi = w[tw + 2 * k + 1]
                    y[o + step * k] = vr * wr - vi * wi
                    y[o + step * k + 1] = vr * wi + vi * wr
                }
                y[o] = y0r
                y[o + 1] = y0i
                put(1, t1r + u1r, t1i + u1i)
                put(2, t2r + u2r, t2i + u2i)
                put(3, t2r - u2r, t2i - u2i)
                put(4, t1r - u1r, t1i - u1i)
            }
        }
    }

    /// A pass of any small radix, by its definition.
    private static func generic(
        _ radix: Int, _ x: UnsafeMutablePointer<Float>, _ y: UnsafeMutablePointer<Float>, m: Int, s: Int, w: UnsafePointer<Float>
    ) {
        for q in 0..<m {
            for t in 0..<s {
                for k in 0..<radix {
                    var sumR: Float = 0
                    var sumI: Float = 0
                    for r in 0..<radix {
                        let angle = -2 * Double.pi * Double(r * k) / Double(radix)
                        let cr = Float(cos(angle))
                        let ci = Float(sin(angle))
                        let index = 2 * (t + s * (q + m * r))
                        sumR += x[index] * cr - x[index + 1] * ci
                        sumI += x[index] * ci + x[index + 1] * cr
                    }
                    let wr = w[2 * (radix * q + k)]
                    let wi = w[2 * (radix * q + k) + 1]
                    let o = 2 * (t + s * (radix * q + k))
                    y[o] = sumR * wr - sumI * wi
                    y[o + 1] = sumR * wi + sumI * wr
                }
            }
        }
    }
}

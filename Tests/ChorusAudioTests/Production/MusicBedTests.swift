import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusAudio

@Suite("Music bed")
struct MusicBedTests {
    static let format = AudioFormat(sampleRate: 16_000, channels: 1)
    static let target = -16.0

    /// White noise from a fixed seed (stationary, so its level can be read off any stretch of it).
    static func noise(seconds: Double, amplitude: Float = 0.3, seed: UInt64 = 5) -> AudioBuffer {
        var random = SplitMix(seed: seed)
        let samples = (0..<format.frames(seconds: seconds)).map { _ in amplitude * Float(2 * random.next() - 1) }
        return AudioBuffer(format: format, samples: samples)
    }

    static func tone(seconds: Double) -> AudioBuffer {
        SignalGenerator.tone(frequency: 300, amplitude: 0.3, seconds: seconds, format: format)
    }

    /// The messages stitched `gapFrames` apart, with and without `bed`: the samples of each, where the messages
    /// landed (which must not move), and what the bed added (the difference, over the program without the bed).
    static func stitched(_ messages: [AudioBuffer], gapFrames: Int, bed: MusicBed) throws
        -> (placed: [Range<Int>], plain: [Float], produced: [Float], added: [Float], mixer: BedMixer)
    {
        let plainEncoder = RecordingEncoder(format: format)
        let producedEncoder = RecordingEncoder(format: format)
        let plain = Stitcher(encoder: plainEncoder, waveform: nil, gapFrames: gapFrames)
        let mixer = try BedMixer(bed: bed, format: format, targetLoudness: target)
        let produced = Stitcher(encoder: producedEncoder, waveform: nil, gapFrames: gapFrames, bed: mixer)
        var placed: [Range<Int>] = []
        for message in messages {
            let range = try plain.append(message)
            #expect(try produced.append(message) == range, "the bed moves no message")
            placed.append(range)
        }
        _ = try plain.finish()
        _ = try produced.finish()
        let added = zip(producedEncoder.samples, plainEncoder.samples).map { $0 - $1 } + producedEncoder.samples.dropFirst(plainEncoder.samples.count)
        return (placed, plainEncoder.samples, producedEncoder.samples, added, mixer)
    }

    static func frames(milliseconds: Int) -> Int { format.frames(milliseconds: milliseconds) }

    static func loudness(_ samples: [Float], _ range: Range<Int>) throws -> Double {
        try #require(try referenceLoudness(AudioBuffer(format: format, samples: Array(samples[range]))).integrated)
    }

    static func rmsDB(_ samples: [Float], _ range: Range<Int>) -> Double {
        let slice = samples[range]
        return 10 * log10(slice.reduce(0) { $0 + Double($1 * $1) } / Double(slice.count))
    }

    @Test("the bed sits level_lu under the target between messages (libebur128), duck_db lower under them, dips before speech starts")
    func duckingDepthAndLookAhead() throws {
        let gap = Self.frames(milliseconds: 3_000)
        let bed = MusicBed(
            source: .pcm(Self.noise(seconds: 1.3)), label: "noise", levelLU: -20, duckDB: 12, fadeInMilliseconds: 0,
            fadeOutMilliseconds: 1_000)
        let result = try Self.stitched([Self.tone(seconds: 3), Self.tone(seconds: 3), Self.tone(seconds: 3)], gapFrames: gap, bed: bed)
        let (placed, added) = (result.placed, result.added)
        #expect(placed == [0..<48_000, 96_000..<144_000, 192_000..<240_000])
        // The tail after the last message is the fade-out; the bed is under all of it.
        #expect(result.produced.count == result.plain.count + Self.frames(milliseconds: 1_000))
        let attack = Self.frames(milliseconds: 250)
        let hold = Self.frames(milliseconds: 200)
        let release = Self.frames(milliseconds: 800)
        let margin = Self.frames(milliseconds: 100)
        for index in 0..<2 {
            // Between messages, once released and before the next dip: the bed's own level.
            let between = (placed[index].upperBound + hold + release + margin)..<(placed[index + 1].lowerBound - attack - margin)
            let level = try Self.loudness(added, between)
            #expect(abs(level - (Self.target - 20)) < 0.5, "between messages \(index) and \(index + 1): \(level) LUFS")
            // Under a message: 12 dB lower.
            let under = (placed[index + 1].lowerBound + margin)..<(placed[index + 1].upperBound - margin)
            let ducked = try Self.loudness(added, under)
            #expect(abs(ducked - (Self.target - 32)) < 0.5, "under message \(index + 1): \(ducked) LUFS")
            // The dip is complete when speech starts: the last 40 ms before it are as low as under it.
            let start = placed[index + 1].lowerBound
            let justBefore = Self.rmsDB(added, (start - Self.frames(milliseconds: 40))..<start)
            let inside = Self.rmsDB(added, under)
            let open = Self.rmsDB(added, between)
            #expect(abs(justBefore - inside) < 1.5, "40 ms before speech \(justBefore) dB, under it \(inside) dB")
            #expect(abs(open - inside - 12) < 0.5)
            // Halfway through the release the bed is about halfway back up.
            let end = placed[index].upperBound + hold + release / 2
            let halfway = Self.rmsDB(added, (end - Self.frames(milliseconds: 20))..<(end + Self.frames(milliseconds: 20)))
            #expect(abs(halfway - (inside + 6)) < 2, "halfway through the release: \(halfway) dB")
        }
        // Before the first message nothing is ducked (it starts at once); the fade-out ends in silence.
        #expect(abs(added.last!) < 1e-4)
        #expect(result.mixer.passes >= 12)
    }

    @Test("a bed that is not a whole number of periods loops without a click; one that does not loop stops where it ends")
    func loopSeams() throws {
        // 0.5 s of 220.5 Hz is 110.25 periods: a plain wrap would jump a quarter period (the whole amplitude).
        let sine = SignalGenerator.tone(frequency: 220.5, amplitude: 0.4, seconds: 0.5, format: Self.format)
        let bed = MusicBed(source: .pcm(sine), label: "sine", levelLU: -10, duckDB: 6, fadeInMilliseconds: 0, fadeOutMilliseconds: 0)
        let gap = Self.frames(milliseconds: 8_000)
        let result = try Self.stitched([Self.tone(seconds: 0.1), Self.tone(seconds: 0.1)], gapFrames: gap, bed: bed)
        let region = (result.placed[0].upperBound + Self.frames(milliseconds: 1_100))..<(result.placed[1].lowerBound - Self.frames(milliseconds: 400))
        let added = result.added
        let peak = region.map { abs(added[$0]) }.max()!
        let steepest = region.dropLast().map { abs(added[$0 + 1] - added[$0]) }.max()!
        // A sine's steepest step is its amplitude times 2πf/rate; a seam may not step further than that.
        let allowed = Double(peak) * 2 * Double.pi * 220.5 / 16_000 * 1.1
        #expect(Double(steepest) <= allowed, "steepest step \(steepest), a sine of this level steps at most \(allowed)")
        #expect(result.mixer.passes >= 16)
        #expect(region.count > Self.frames(milliseconds: 6_000))

        // Without looping, the bed is heard for its length and the rest is as without it.
        var once = bed
        once.loop = false
        let single = try Self.stitched([Self.tone(seconds: 0.1), Self.tone(seconds: 0.1)], gapFrames: gap, bed: once)
        #expect(single.mixer.endedAt == sine.frameCount && single.mixer.passes == 1)
        #expect(single.added[..<sine.frameCount].contains { abs($0) > 0.01 })
        #expect(single.added[sine.frameCount...].allSatisfy { $0 == 0 })
    }

    @Test("the bed is the same however the render's writes are cut, a loop seam inside a write or across two")
    func sameWhateverTheChunks() throws {
        // A steady level (no fades, no speech), so every frame's gain is the same: the bed's samples must not depend
        // on where one write ends and the next begins.
        for bed in [
            MusicBed(source: .pcm(Self.noise(seconds: 0.5)), label: "short", levelLU: -10, fadeInMilliseconds: 0, fadeOutMilliseconds: 0),
            MusicBed(
                source: .encoded(try ClipEncoding.wavFloat.data(Self.noise(seconds: 61))), label: "long", levelLU: -10,
                fadeInMilliseconds: 0, fadeOutMilliseconds: 0),
        ] {
            let frames = bed.label == "short" ? 48_000 : 2_000_000
            let whole = try BedMixer(bed: bed, format: Self.format, targetLoudness: Self.target)
            var one = [Float](repeating: 0, count: frames)
            try whole.mix(into: &one, at: 0)
            let pieces = try BedMixer(bed: bed, format: Self.format, targetLoudness: Self.target)
            var random = SplitMix(seed: 2)
            var cut: [Float] = []
            while cut.count < frames {
                var chunk = [Float](repeating: 0, count: min(frames - cut.count, 1 + Int(random.next() * 700)))
                try pieces.mix(into: &chunk, at: cut.count)
                cut += chunk
            }
            let differing = zip(cut, one).filter { $0 != $1 }.count
            #expect(cut.count == one.count && differing == 0, "\(bed.label): \(differing) samples differ")
            #expect(whole.passes == pieces.passes && whole.passes > 1)
        }
    }

    @Test("fade in from the first sample; a bed longer than the minute measured is read as the render goes, opened again to loop")
    func fadeInAndLongBed() throws {
        // 75 s of noise: longer than the minute measured, so it is read as the render goes, and looped by opening it again.
        let long = Self.noise(seconds: 75)
        let data = try ClipEncoding.wavFloat.data(long)
        let bed = MusicBed(source: .encoded(data), label: "long.wav", levelLU: -20, duckDB: 12, fadeInMilliseconds: 2_000, fadeOutMilliseconds: 500)
        let result = try Self.stitched([Self.tone(seconds: 1), Self.tone(seconds: 1)], gapFrames: Self.frames(milliseconds: 5_000), bed: bed)
        #expect(result.mixer.passes == 1)
        // The fade-in: near silence in the first 100 ms (ducked under the first message too), at its level after 2 s.
        let first = Self.rmsDB(result.added, 0..<Self.frames(milliseconds: 100))
        let later = Self.rmsDB(result.added, Self.frames(milliseconds: 2_100)..<Self.frames(milliseconds: 2_500))
        #expect(later - first > 12, "first 100 ms \(first) dB, after the fade-in \(later) dB")

        // The same bed looped under a program longer than it: a second pass from the start, no click at the seam.
        let shortProgram = try Self.stitched([Self.tone(seconds: 1), Self.tone(seconds: 1)], gapFrames: Self.frames(milliseconds: 80_000), bed: bed)
        #expect(shortProgram.mixer.passes == 2)
    }

    @Test("bad beds: undecodable, empty, silent; settings out of range — each an error naming the field")
    func badBeds() async throws {
        func mixer(_ bed: MusicBed) throws { _ = try BedMixer(bed: bed, format: Self.format, targetLoudness: Self.target) }
        await expectAudioError(.unsupportedFormat, mentioning: ["music.audio (bed.mp3)"]) {
            try mixer(MusicBed(source: .encoded(Data(repeating: 0x5A, count: 4_000)), label: "bed.mp3"))
        }
        await expectAudioError(.emptyAudio, mentioning: ["music.audio (quiet)", "silent"]) {
            try mixer(MusicBed(source: .pcm(SignalGenerator.silence(seconds: 2, format: Self.format)), label: "quiet"))
        }
        await expectAudioError(.emptyAudio, mentioning: ["music.audio (nothing)"]) {
            try mixer(MusicBed(source: .pcm(AudioBuffer(format: Self.format)), label: "nothing"))
        }
        let sound = MusicBed(source: .pcm(Self.noise(seconds: 1)), label: "noise")
        for (change, field) in [
            ({ (bed: inout MusicBed) in bed.levelLU = 3 }, "music.level_lu"), ({ $0.levelLU = .nan }, "music.level_lu"),
            ({ $0.duckDB = -1 }, "music.duck_db"), ({ $0.fadeInMilliseconds = -5 }, "music.fade_in_ms"),
            ({ $0.fadeOutMilliseconds = 600_000 }, "music.fade_out_ms"),
        ] {
            var bed = sound
            change(&bed)
            await expectAudioError(.invalidArgument, mentioning: [field]) { try mixer(bed) }
        }
    }
}

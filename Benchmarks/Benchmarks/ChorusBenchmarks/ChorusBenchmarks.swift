import Benchmark
import ChorusAudio
import ChorusFixtures
import ChorusConversation
import Foundation

/// Generated inputs, written once per benchmark process.
enum Fixtures {
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-benchmarks-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    static let voice44 = SignalGenerator.speechLike(fundamental: 150, seconds: 60, format: .speech, seed: 1)
    static let voice24 = SignalGenerator.speechLike(fundamental: 190, seconds: 60, format: AudioFormat(sampleRate: 24_000, channels: 1), seed: 2)
    static let stereo44 = SignalGenerator.speechLike(fundamental: 120, seconds: 60, format: AudioFormat(sampleRate: 44_100, channels: 2), seed: 3)

    static func file(_ name: String, _ encoding: ClipEncoding, _ signal: AudioBuffer, bitRate: Int = 128_000) -> URL {
        let url = directory.appendingPathComponent(name)
        if !FileManager.default.fileExists(atPath: url.path) { try! encoding.write(signal, to: url, bitRate: bitRate) }
        return url
    }

    static let mp3 = file("voice-44k.mp3", .mp3, voice44)
    static let m4a = file("voice-44k-stereo.m4a", .m4a, stereo44)
    static let wav = file("voice-24k.wav", .wav16, voice24)
    static let pcm16: [Int16] = voice44.samples.map(PCM16.quantize)

    static let conversation: SyntheticConversation = {
        let folder = directory.appendingPathComponent("conversation")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try! SyntheticConversation.write(messages: 50, in: folder)
    }()

    /// 50 messages of 4–8 s as 44.1 kHz WAV bytes in memory, for stitching with a trivial decode and no normalization.
    static let wavMessages = Conversation(messages: (0..<50).map { index in
        let clip = SignalGenerator.speechLike(fundamental: 100 + Double(index % 5) * 30, seconds: 4 + Double(index % 5),
                                              format: .speech, seed: UInt64(index))
        return Conversation.Message(speaker: "Speaker \(index % 5)", audio: .data(try! ClipEncoding.wav16.data(clip), label: "wav \(index)"))
    })

    static let chorus = try! Chorus(configuration: Chorus.Configuration(cacheDirectory: directory.appendingPathComponent("cache")))
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .instructions, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(10), maxIterations: 20)

    Benchmark("decode MP3 60 s 44.1 kHz mono") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try AudioFileReader(url: Fixtures.mp3).readAll()) }
    }
    Benchmark("decode M4A 60 s 44.1 kHz stereo") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try AudioFileReader(url: Fixtures.m4a).readAll()) }
    }
    Benchmark("decode WAV 60 s 24 kHz mono") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try AudioFileReader(url: Fixtures.wav).readAll()) }
    }
    Benchmark("resample 60 s 24 kHz mono → 44.1 kHz") { benchmark in
        for _ in benchmark.scaledIterations {
            let resampler = try Resampler(from: Fixtures.voice24.format, to: .speech)
            var out: [Float] = []
            try Fixtures.voice24.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &out) }
            try resampler.flush(into: &out)
            blackHole(out)
        }
    }
    Benchmark("resample 60 s 44.1 kHz stereo → mono (downmix only)") { benchmark in
        for _ in benchmark.scaledIterations {
            let resampler = try Resampler(from: Fixtures.stereo44.format, to: .speech)
            var out: [Float] = []
            try Fixtures.stereo44.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &out) }
            try resampler.flush(into: &out)
            blackHole(out)
        }
    }
    Benchmark("loudness normalize 60 s 44.1 kHz mono (measure, gain, limit)") { benchmark in
        for _ in benchmark.scaledIterations {
            var clip = Fixtures.voice44
            blackHole(try LoudnessNormalizer(targetLUFS: -16).normalize(&clip))
        }
    }
    Benchmark("loudness measure only 60 s 44.1 kHz mono (K-weighted gated loudness + true-peak estimate)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try LoudnessMeasurement.measure(Fixtures.voice44)) }
    }
    Benchmark("stitch 50 in-memory WAV messages → WAV (no trim or normalize)") { benchmark in
        var options = RenderOptions()
        options.normalize = false
        options.trimSilence = false
        let output = Fixtures.directory.appendingPathComponent("stitched.wav")
        for _ in benchmark.scaledIterations {
            blackHole(try await Fixtures.chorus.render(Fixtures.wavMessages, options: options, to: RenderOutputs(audio: output)).result())
        }
    }
    Benchmark("encode MP3 60 s 44.1 kHz mono 128 kbit/s (LAME)") { benchmark in
        let output = Fixtures.directory.appendingPathComponent("encoded.mp3")
        for _ in benchmark.scaledIterations { try AudioFileWriter.write(Fixtures.voice44, to: output) }
    }
    Benchmark("encode M4A 60 s 44.1 kHz mono 128 kbit/s (AAC)") { benchmark in
        let output = Fixtures.directory.appendingPathComponent("encoded.m4a")
        for _ in benchmark.scaledIterations { try AudioFileWriter.write(Fixtures.voice44, to: output) }
    }
    Benchmark("waveform peaks 60 s 44.1 kHz mono, 256 samples per pixel") { benchmark in
        for _ in benchmark.scaledIterations {
            let generator = try WaveformGenerator(sampleRate: 44_100, channels: 1, zoom: .samplesPerPixel(256))
            Fixtures.pcm16.withUnsafeBufferPointer { generator.process($0) }
            blackHole(generator.finish())
        }
    }
    Benchmark("full render 50 mixed-format messages → MP3 128 kbit/s + timeline",
              configuration: .init(maxDuration: .seconds(30), maxIterations: 5)) { benchmark in
        let conversation = try Conversation.load(from: Fixtures.conversation.conversationURL)
        let outputs = RenderOutputs(audio: Fixtures.directory.appendingPathComponent("render.mp3"),
                                    timeline: Fixtures.directory.appendingPathComponent("render.json"))
        for _ in benchmark.scaledIterations {
            blackHole(try await Fixtures.chorus.render(conversation, to: outputs).result())
        }
    }
}

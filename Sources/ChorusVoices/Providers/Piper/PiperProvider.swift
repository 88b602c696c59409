public import ChorusAudio
public import Foundation

/// Natural offline voices: Piper voices run in process through sherpa-onnx.
///
/// Voice ids are the prepared voices' folder names in the Piper voices folder (`PiperVoice.voicesFolder`):
/// `piper:en_US-joe-medium`. Text becomes IPA phonemes through libespeak-ng (the voice's espeak-ng voice, sentence
/// by sentence, punctuation kept), and each sentence is synthesized on a core of its own (`PiperEngine`). Settings:
/// `PiperSettings`. The same text and settings give the same audio.
///
/// sherpa-onnx returns samples only: the words are timed by hearing the audio (`words`: the offline Whisper model
/// when it is installed) and aligning the text to it (`Transcript.aligned(to:)`, then `SpeechOnsets`); without a
/// recognizer, each sentence's words share its time in proportion to their length.
///
/// ```swift
/// let speech = try await PiperProvider().synthesize(SynthesisRequest(voice: "en_US-joe-medium", text: "Hi!", outputFormat: "pcm"))
/// ```
public struct PiperProvider: VoiceProvider {
    public var isLocal: Bool { true }
    public let id = "piper"
    /// The Piper voices folder.
    public let folder: URL
    /// Who hears the audio to time its words.
    public let words: Transcriber

    /// Voices in `folder`, words timed by `words`' recognizer (only an offline one is asked).
    public init(folder: URL = PiperVoice.voicesFolder(), words: Transcriber = .automatic) {
        self.folder = folder
        self.words = words
    }

    /// The most phonemes one call to sherpa-onnx gets: a longer sentence is cut at a space.
    static let mostPhonemes = 400

    public func voices() async throws -> [VoiceInfo] {
        var result: [VoiceInfo] = []
        for name in PiperVoice.names(in: folder) {
            let id = VoiceID(provider: self.id, voice: name)
            do {
                let voice = try PiperVoice(folder: folder.appendingPathComponent(name, isDirectory: true))
                let speakers = voice.speakers == 1 ? "1 speaker" : "\(voice.speakers) speakers"
                let quality = voice.quality.isEmpty ? "" : ", \(voice.quality) quality"
                result.append(VoiceInfo(id: id, name: name, details: "\(voice.language), \(voice.sampleRate) Hz, \(speakers)\(quality); licence: \(voice.licence)"))
            } catch let error as VoiceError {
                result.append(VoiceInfo(id: id, name: name, details: "not usable: \(error.message)"))
            }
        }
        for name in PiperVoice.unprepared(in: folder) {
            result.append(VoiceInfo(id: VoiceID(provider: id, voice: name), name: name, details: "not prepared yet: run scripts/setup.sh"))
        }
        return result
    }

    public func characterLimit(settings: [String: JSONValue]) -> Int { 2_000 }

    public func outputFormats(settings: [String: JSONValue]) -> [String] { ["pcm"] }

    public func audioAffectingSettings(_ settings: [String: JSONValue]) -> [String: JSONValue] {
        var result = settings
        result["espeak_ng"] = .string(EspeakProvider.libraryVersion)
        result["piper_revision"] = .number(Double(PiperVoice.revision))
        return result
    }

    public func audioAffectingSettings(_ settings: [String: JSONValue], voice name: String) -> [String: JSONValue] {
        var result = audioAffectingSettings(settings)
        if let voice = try? PiperVoice.named(name, in: folder) {
            if let resolved = try? PiperSettings(settings, voice: voice) { result.merge(resolved.canonical) { _, resolved in resolved } }
            result["model"] = .string(voice.sourceDigest)
        }
        return result
    }

    public func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech {
        let voice = try PiperVoice.named(request.voice, in: folder)
        let settings = try PiperSettings(request.settings, voice: voice)
        let sentences = try await EspeakEngine.shared.phonemes(request.text, voice: voice.espeakVoice)
            .flatMap { Self.pieces(of: $0, most: Self.mostPhonemes) }
        guard !sentences.isEmpty else {
            throw VoiceError(.badRequest, provider: id, message: "no words espeak-ng can read in this text")
        }
        let engine = PiperEngine.shared
        let synthesizer = try await engine.synthesizer(for: voice, noise: .init(scale: settings.noiseScale, w: settings.noiseW))
        let spoken = try await withThrowingTaskGroup(of: (Int, [Float]).self) { group in
            for (index, sentence) in sentences.enumerated() {
                group.addTask {
                    (index, try await engine.pool.run { try synthesizer.speak(sentence, lengthScale: settings.lengthScale, speaker: settings.speaker) })
                }
            }
            var parts = [[Float]](repeating: [], count: sentences.count)
            for try await (index, samples) in group { parts[index] = samples }
            return parts
        }
        let samples = spoken.flatMap { $0 }
        guard !samples.isEmpty else {
            throw VoiceError(.badRequest, provider: id, message: "\(voice.name) produced no audio for this text")
        }
        let audio = AudioBuffer(format: AudioFormat(sampleRate: voice.sampleRate, channels: 1), samples: samples)
        let duration = audio.duration
        let words = try await timedWords(request.text, audio: audio).map {
            WordTiming(word: $0.word, start: min($0.start, duration), end: min($0.end, duration))
        }
        return SynthesizedSpeech(audio: .pcm(audio), words: words)
    }

    /// `phonemes` cut at spaces into pieces of at most `most` characters (a piece without a space is cut anywhere).
    static func pieces(of phonemes: String, most: Int) -> [String] {
        var pieces: [String] = []
        var rest = Substring(phonemes)
        while rest.count > most {
            let window = rest.prefix(most)
            let cut = window.lastIndex(of: " ").map { rest.index(after: $0) } ?? window.endIndex
            pieces.append(String(rest[..<cut]).trimmingCharacters(in: .whitespaces))
            rest = rest[cut...]
        }
        let last = rest.trimmingCharacters(in: .whitespaces)
        if !last.isEmpty { pieces.append(last) }
        return pieces.filter { !$0.isEmpty }
    }

    /// Every word of `text` timed in `audio`: heard by the offline recognizer and aligned, else shared out.
    private func timedWords(_ text: String, audio: AudioBuffer) async throws -> [WordTiming] {
        let pool = PiperEngine.shared.pool
        if let recognizer = try? await words.provide() as? WhisperRecognizer {
            let rate = WhisperRecognizer.sampleRate
            let heard = try await pool.run { () -> [Float] in
                let resampler = try Resampler(from: audio.format, to: AudioFormat(sampleRate: rate, channels: 1))
                var samples: [Float] = []
                try audio.samples.withUnsafeBufferPointer { try resampler.convert($0, into: &samples) }
                try resampler.flush(into: &samples)
                return samples
            }
            if let transcript = try? await recognizer.transcribeForAlignment(heard) {
                return try await pool.run { SpeechOnsets.refine(transcript.aligned(to: text), samples: heard, rate: rate) }
            }
        }
        return try await pool.run {
            let pauses = SpeechOnsets.pauses(in: audio.samples, rate: audio.format.sampleRate)
            let start = pauses.first.map { $0.start == 0 ? $0.end : 0 } ?? 0
            return WordAligner.align(text, anchors: [(offset: 0, time: start)], pauses: pauses.filter { $0.start > 0 }.map(\.start),
                                     duration: audio.duration)
        }
    }
}

import ChorusAudio
import ChorusText
public import ChorusWire
public import Foundation

/// Natural offline voices: Piper voices run in process on ONNX Runtime.
///
/// Voice ids are the prepared voices' folder names in the Piper voices folder (`PiperVoice.voicesFolder`):
/// `piper:en_US-joe-medium`. Text becomes IPA phonemes through libespeak-ng (the voice's espeak-ng voice, sentence
/// by sentence, punctuation kept), and each sentence is synthesized on a core of its own (`PiperEngine`). Settings:
/// `PiperSettings`. The same text and settings give the same audio.
///
/// Words are timed by the voice itself: the prepared graph also gives how many frames it spoke each phoneme for
/// (`scripts/prepare_piper.py`), so every phoneme's first and last sample is known; each word of the text starts
/// where its first phoneme does (`SpokenPhonemes.words(of:clauses:spoken:known:rate:)`) and ends at the next word or at its clause's
/// punctuation.
///
/// ```swift
/// let speech = try await PiperProvider().synthesize(SynthesisRequest(voice: "en_US-joe-medium", text: "Hi!", outputFormat: "pcm"))
/// ```
public struct PiperProvider: VoiceProvider {
    public let id = BuiltInProvider.piper.rawValue
    /// The Piper voices folder.
    public let folder: URL

    /// Voices in `folder`.
    public init(folder: URL = PiperVoice.voicesFolder()) {
        self.folder = folder
    }

    /// The most phonemes one call of the voice gets: a longer sentence is cut at a space.
    static let mostPhonemes = 400

    /// Its voices that open, set-up's (`PiperVoice.defaultName`) first.
    public func defaultVoices() -> (first: [String], later: [String]) {
        let names = PiperVoice.names(in: folder).filter { (try? PiperVoice(folder: folder.appendingPathComponent($0, isDirectory: true))) != nil }
        return (names.filter { $0 == PiperVoice.defaultName } + names.filter { $0 != PiperVoice.defaultName }, [])
    }

    public func voices() async throws -> [VoiceInfo] {
        var result: [VoiceInfo] = []
        for name in PiperVoice.names(in: folder) {
            let id = VoiceID(provider: self.id, voice: name)
            do {
                let voice = try PiperVoice(folder: folder.appendingPathComponent(name, isDirectory: true))
                let speakers = voice.speakers == 1 ? "1 speaker" : "\(voice.speakers) speakers"
                let quality = voice.quality.isEmpty ? "" : ", \(voice.quality) quality"
                result.append(
                    VoiceInfo(
                        id: id, name: name, details: "\(voice.language), \(voice.sampleRate) Hz, \(speakers)\(quality); licence: \(voice.licence)"))
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

    public func adjusting(rate: Double, voice: String, settings: [String: JSONValue]) -> (voice: String, settings: [String: JSONValue]) {
        let current =
            settings["length_scale"].flatMap { if case .number(let value) = $0 { value } else { nil } }
            ?? (try? PiperVoice.named(voice, in: folder).defaults.lengthScale) ?? 1
        var adjusted = settings
        adjusted["length_scale"] = .number(
            min(max(current / rate, PiperSettings.lengthScaleRange.lowerBound), PiperSettings.lengthScaleRange.upperBound))
        return (voice, adjusted)
    }

    /// IPA between `[[` and `]]`: spliced into the phonemes espeak-ng gives the rest of the text (`IPA.piperPhonemes`).
    public func phonemeMarkup(voice: String) -> (@Sendable (String) -> String?)? { { ipa in IPA.open + ipa + IPA.close } }

    public func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech {
        let voice = try PiperVoice.named(request.voice, in: folder)
        let settings = try PiperSettings(request.settings, voice: voice)
        let english = voice.espeakVoice.lowercased().hasPrefix("en")
        let known = voice.symbols
        let clauses = try await EspeakEngine.shared.phonemeClauses(request.text, voice: voice.espeakVoice) { ipa in
            IPA.piperPhonemes(ipa, english: english, known: known)
        }
        let sentences = EspeakEngine.sentences(of: clauses).flatMap { Self.pieces(of: $0, most: Self.mostPhonemes) }
        guard !sentences.isEmpty else {
            throw VoiceError(.badRequest, provider: id, message: "no words espeak-ng can read in this text")
        }
        let synthesizer = try await PiperEngine.shared.synthesizer(for: voice)
        let noise = PiperSynthesizer.Noise(scale: settings.noiseScale, w: settings.noiseW)
        let spoken = try await SynthesisThreads.speak(sentences) { sentence, _ in
            try synthesizer.speak(sentence, lengthScale: settings.lengthScale, noise: noise, speaker: settings.speaker)
        }
        let samples = spoken.flatMap(\.samples)
        guard !samples.isEmpty else {
            throw VoiceError(.badRequest, provider: id, message: "\(voice.name) produced no audio for this text")
        }
        let audio = AudioBuffer(format: AudioFormat(sampleRate: voice.sampleRate, channels: 1), samples: samples)
        let words = SpokenPhonemes.words(of: request.text, clauses: clauses, spoken: spoken, known: voice.symbols, rate: voice.sampleRate)
        return SynthesizedSpeech(
            audio: .pcm(audio), words: words, notes: SpokenPhonemes.droppedNote(sentences.flatMap(voice.unknownSymbols), voice: "\(id):\(voice.name)")
        )
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
}

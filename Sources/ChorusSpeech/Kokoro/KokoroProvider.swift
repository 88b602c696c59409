import ChorusAudio
import ChorusInference
import ChorusText
public import ChorusWire
public import Foundation

/// Natural offline voices: Kokoro-82M run in process on ONNX Runtime, with any voice of the Kokoro folder's voice
/// files (`KokoroVoices`), and blends of them.
///
/// Voice ids are the voices' names, or blends as Kokoro-FastAPI writes them: `kokoro:jf_alpha`,
/// `kokoro:jf_alpha+jf_nezumi` (equal parts), `kokoro:jf_alpha(2)+jm_kumo(1)` (weighted, normalized). Settings, in
/// the voice's query or `voice_settings.kokoro` (the query wins): `speed` (0.5–2, 1 unless told) and `language`
/// (the espeak-ng voice the text is phonemized with; by default the conversation's `"language"` when it says one,
/// else the one the voice's name says, `KokoroVoices.kind`).
/// Text becomes IPA phonemes through libespeak-ng (as for Piper: one owner of phonemization), English written in the
/// symbols Kokoro was trained on (`KokoroSynthesizer.trainedSymbols`) and mapped through the model's vocabulary
/// (symbols it lacks are left out); each sentence is one call (cut at a space if it has more
/// phonemes than the model's window), synthesized on the neural voices' threads (`SynthesisThreads`). Words are timed
/// by the model's own durations (`scripts/prepare_kokoro.py`): each token's frames are 600 samples. The same text,
/// voice and settings give the same audio.
///
/// ```swift
/// let speech = try await KokoroProvider().synthesize(SynthesisRequest(voice: "jf_alpha", text: "Hi!", outputFormat: "pcm"))
/// ```
public struct KokoroProvider: VoiceProvider {
    public let id = BuiltInProvider.kokoro.rawValue
    /// The Kokoro folder (`KokoroModel.folder`).
    public let folder: URL

    public init(folder: URL = KokoroModel.folder()) {
        self.folder = folder
    }

    /// The most phonemes one call gets: a longer sentence is cut at a space (within the model's 510-token window).
    static let mostPhonemes = 400

    public static let speedRange = 0.5...2.0

    /// When its model opens: its voices that read English (`KokoroVoices.defaultOrder`), then blends of them
    /// (`KokoroVoices.defaultBlends`). A voice made from one person's recordings (`MadeVoices`) is never a default: it
    /// is that person's, given only where a conversation names it.
    public func defaultVoices() -> (first: [String], later: [String]) {
        guard let model = try? KokoroModel(folder: folder) else { return ([], []) }
        let personal = MadeVoices.records(in: model.voicesFolder).filter { $0.value.people == 1 }
        let voices = KokoroVoices.defaultOrder(of: KokoroVoices.of(folder: model.voicesFolder).styles.keys.filter { personal[$0] == nil })
        return (voices, KokoroVoices.defaultBlends(of: voices))
    }

    public func voices() async throws -> [VoiceInfo] {
        let model: KokoroModel
        do {
            model = try KokoroModel(folder: folder)
        } catch let error as VoiceError {
            guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
            return [VoiceInfo(id: VoiceID(provider: id, voice: "*"), name: "kokoro", details: "not usable: \(error.message)")]
        }
        let voices = KokoroVoices.of(folder: model.voicesFolder)
        let made = MadeVoices.records(in: model.voicesFolder)
        var result = voices.styles.keys.sorted().map { name in
            let kind = KokoroVoices.kind(of: name)
            let described = [kind.language, kind.sounds].compactMap { $0 }.joined(separator: ", ")
            return VoiceInfo(
                id: VoiceID(provider: id, voice: name), name: name,
                details: made[name].map {
                    "\(kind.language.map { $0 + "; " } ?? "")\($0.summary); \(KokoroModel.sampleRate) Hz; Kokoro-82M (\(model.source))"
                }
                    ?? "\(described.isEmpty ? "" : described + ", ")\(KokoroModel.sampleRate) Hz; Kokoro-82M (\(model.source)); licence: \(model.licence)"
            )
        }
        for problem in voices.problems {
            result.append(VoiceInfo(id: VoiceID(provider: id, voice: "*"), name: "voice file", details: "not usable: \(problem)"))
        }
        return result
    }

    public func characterLimit(settings: [String: JSONValue]) -> Int { 2_000 }

    public func outputFormats(settings: [String: JSONValue]) -> [String] { ["pcm"] }

    public func audioAffectingSettings(_ settings: [String: JSONValue]) -> [String: JSONValue] {
        var result = settings
        result["espeak_ng"] = .string(EspeakProvider.libraryVersion)
        result["kokoro_revision"] = .number(Double(KokoroModel.revision))
        return result
    }

    public func audioAffectingSettings(_ settings: [String: JSONValue], voice name: String) -> [String: JSONValue] {
        var result = audioAffectingSettings(settings)
        if let model = try? KokoroModel(folder: folder) {
            result["model"] = .string(model.sourceDigest)
            // The voice files' identity: a voice file replaced gives other audio.
            result["voices"] = .string(ModelFolder.contents(of: model.voicesFolder).joined(separator: "|"))
        }
        return result
    }

    public func adjusting(rate: Double, voice: String, settings: [String: JSONValue]) -> (voice: String, settings: [String: JSONValue]) {
        let current = Self.voice(voice, number: "speed") ?? settings["speed"]?.number ?? 1
        let speed = min(max(current * rate, Self.speedRange.lowerBound), Self.speedRange.upperBound)
        return (Self.voice(voice, setting: "speed", to: String(speed)), settings)
    }

    /// The conversation's language as espeak-ng's voice for the phonemes — its language and region (`es`, `en-gb` for
    /// `en-GB-oxendict`) — unless `settings` name one (a voice's own `?language=` still wins over both).
    public func settings(_ settings: [String: JSONValue], forTextIn language: String) -> [String: JSONValue] {
        guard settings["language"] == nil else { return settings }
        var result = settings
        result["language"] = .string(language.lowercased().split(separator: "-").prefix(2).joined(separator: "-"))
        return result
    }

    /// IPA between `[[` and `]]`: spliced into the phonemes espeak-ng gives the rest of the text.
    public func phonemeMarkup(voice: String) -> (@Sendable (String) -> String?)? { { ipa in IPA.open + ipa + IPA.close } }

    /// A voice as a request gives it: the blend and its settings.
    struct Spoken: Equatable {
        var blend: KokoroVoices.Blend
        var speed: Double
        var language: String?
    }

    /// Reads `voice` (`name`, `a+b`, `a(2)+b(1)`, each with `?speed=&language=`) over `settings`.
    /// - Throws: `VoiceError` (`.badRequest`) naming an unknown setting or a value out of range.
    static func spoken(_ voice: String, settings: [String: JSONValue]) throws -> Spoken {
        func bad(_ message: String) -> VoiceError { VoiceError(.badRequest, provider: BuiltInProvider.kokoro.rawValue, message: message) }
        let halves = voice.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var values: [String: JSONValue] = settings
        if halves.count > 1 {
            for parameter in halves[1].split(separator: "&") {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2 else { throw bad("voice \"\(voice)\": \"\(parameter)\" is not name=value") }
                let key = String(pair[0])
                values[key] = Double(pair[1]).map(JSONValue.number) ?? .string(String(pair[1]))
            }
        }
        var speed = 1.0
        var language: String?
        for (key, value) in values {
            switch key {
            case "speed":
                guard let number = value.number, number.isFinite, speedRange.contains(number) else {
                    throw bad("speed must be a number from \(speedRange.lowerBound) to \(speedRange.upperBound)")
                }
                speed = number
            case "language":
                guard let name = value.string, !name.isEmpty, name.count <= 32,
                    name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
                else { throw bad("language must be an espeak-ng voice name, such as en-us, en-gb, es or fr-fr") }
                language = name
            default:
                throw bad("unknown setting \"\(key)\" (known: speed, language)")
            }
        }
        return Spoken(blend: try KokoroVoices.Blend(String(halves[0])), speed: speed, language: language)
    }

    public func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech {
        let spoken = try Self.spoken(request.voice, settings: request.settings)
        let engine = KokoroEngine.shared
        let synthesizer = try await engine.synthesizer(in: folder)
        let style = try KokoroVoices.of(folder: synthesizer.model.voicesFolder).style(of: spoken.blend)
        let language = spoken.language ?? KokoroVoices.kind(of: spoken.blend.parts[0].name).espeakVoice
        let known = Set(synthesizer.model.vocabulary.keys)
        let english = language.lowercased().hasPrefix("en")
        let clauses = try await EspeakEngine.shared.phonemeClauses(request.text, voice: language) { ipa in
            IPA.piperPhonemes(ipa, english: english, known: known)
        }
        let sentences = EspeakEngine.sentences(of: clauses).flatMap { PiperProvider.pieces(of: $0, most: Self.mostPhonemes) }
            .map { KokoroSynthesizer.trainedSymbols($0, language: language) }
        guard !sentences.isEmpty else {
            throw VoiceError(.badRequest, provider: id, message: "no words espeak-ng can read in this text")
        }
        let speed = spoken.speed
        let parts = try await SynthesisThreads.speak(sentences) { try synthesizer.speak($0, style: style, speed: speed, urgent: $1) }
        let samples = parts.flatMap(\.samples)
        guard !samples.isEmpty else { throw VoiceError(.badRequest, provider: id, message: "Kokoro produced no audio for this text") }
        let audio = AudioBuffer(format: AudioFormat(sampleRate: KokoroModel.sampleRate, channels: 1), samples: samples)
        let words = SpokenPhonemes.words(of: request.text, clauses: clauses, spoken: parts, known: known, rate: KokoroModel.sampleRate)
        return SynthesizedSpeech(
            audio: .pcm(audio), words: words,
            notes: SpokenPhonemes.droppedNote(
                sentences.flatMap { synthesizer.tokens(of: $0).dropped }, voice: "\(id):\(request.voice.prefix { $0 != "?" })"))
    }
}

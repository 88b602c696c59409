import CEspeakNG
import ChorusAudio
import ChorusText
public import ChorusWire
import Foundation

/// Offline text-to-speech with libespeak-ng, in process. The default provider.
///
/// Voice ids are espeak-ng voice names with an optional variant and parameters:
/// `espeak:en-us`, `espeak:en-gb+f3`, `espeak:en-us+m3?pitch=35&rate=165`.
/// Word timings come from espeak-ng's word events.
///
/// ```swift
/// let speech = try await EspeakProvider().synthesize(SynthesisRequest(voice: "en-us+f3", text: "Hi!", outputFormat: "pcm"))
/// ```
public struct EspeakProvider: VoiceProvider {
    public let id = BuiltInProvider.espeak.rawValue

    public init() {}

    /// Voices given to speakers without one, in order. Each differs from the others in pitch and rate
    /// (and accent or variant), which espeak-ng always honours; some variant suffixes it silently ignores.
    public static let defaultVoices: [String] = [
        "en-us+m3?pitch=38&rate=165",
        "en-us+f3?pitch=72&rate=172",
        "en+m1?pitch=50&rate=135",
        "en-gb-x-rp+f2?pitch=62&rate=195",
        "en-029+m1?pitch=28&rate=210",
        "en-us+f4?pitch=92&rate=150",
        "en-gb-scotland+m7?pitch=18&rate=190",
        "en-us+f1?pitch=50&rate=175",
    ]

    /// What voice `spec` sounds like by its variant (`en-us+f3`: female, `en+m1`: male); `nil` without one of those.
    static func sounds(of spec: String) -> VoiceSound? {
        let variant = Array(spec.prefix { $0 != "?" }.split(separator: "+", maxSplits: 1).dropFirst().first?.lowercased() ?? "")
        guard variant.count >= 2, variant.dropFirst().allSatisfy(\.isNumber) else { return nil }
        return variant[0] == "f" ? .female : variant[0] == "m" ? .male : nil
    }

    public func defaultVoices() -> (first: [String], later: [String]) { (Self.defaultVoices, []) }

    public func voices() async throws -> [VoiceInfo] {
        var result = Self.defaultVoices.enumerated().map { index, spec in
            VoiceInfo(
                id: VoiceID(provider: id, voice: spec), name: "Default voice \(index + 1)",
                details: "given to speakers without a voice, in order of appearance")
        }
        for voice in try await EspeakEngine.shared.installedVoices() {
            let gender = voice.gender == 1 ? "male" : voice.gender == 2 ? "female" : ""
            result.append(
                VoiceInfo(
                    id: VoiceID(provider: id, voice: voice.identifier.split(separator: "/").last.map(String.init) ?? voice.identifier),
                    name: voice.name, details: [voice.language, gender].filter { !$0.isEmpty }.joined(separator: ", ")))
        }
        return result
    }

    public func characterLimit(settings: [String: JSONValue]) -> Int { 20_000 }

    public func outputFormats(settings: [String: JSONValue]) -> [String] { ["pcm"] }

    public func audioAffectingSettings(_ settings: [String: JSONValue]) -> [String: JSONValue] {
        ["espeak_ng": .string(Self.libraryVersion)]
    }

    /// The installed libespeak-ng's version: an upgrade changes the audio, so it is part of the cache key.
    static let libraryVersion: String = espeak_Info(nil).map { String(cString: $0) } ?? "unknown"

    public func adjusting(rate: Double, voice: String, settings: [String: JSONValue]) -> (voice: String, settings: [String: JSONValue]) {
        // espeak-ng's rate is words per minute (80–450; its default 175).
        let current = Self.voice(voice, number: "rate") ?? 175
        return (Self.voice(voice, setting: "rate", to: String(Int(min(max(current * rate, 80), 450).rounded()))), settings)
    }

    /// IPA as espeak-ng's own phoneme mnemonics between `[[` and `]]` (`IPA.espeakMnemonics`), which it reads as
    /// phonemes (`espeakPHONEMES`): for its English voices only (the mnemonics are English's; another language's voice
    /// says the alias).
    public func phonemeMarkup(voice: String) -> (@Sendable (String) -> String?)? {
        guard voice.lowercased().hasPrefix("en") else { return nil }
        return { ipa in
            let mnemonics = IPA.espeakMnemonics(ipa)
            return mnemonics.isEmpty ? nil : IPA.open + mnemonics + IPA.close
        }
    }

    public func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech {
        let voice = try EspeakVoice(parsing: request.voice)
        let output = try await EspeakEngine.shared.speak(request.text, voice: voice)
        let rate = output.rate
        guard !output.samples.isEmpty else {
            throw VoiceError(.badRequest, provider: id, message: "espeak-ng produced no audio for this text")
        }
        let format = AudioFormat(sampleRate: rate, channels: 1)
        let samples = PCM16.samples(output.samples)
        let duration = format.seconds(frames: samples.count)
        return SynthesizedSpeech(
            audio: .pcm(AudioBuffer(format: format, samples: samples)),
            words: Self.words(in: request.text, events: output, duration: duration))
    }

    /// Word events carry 1-based character positions and a start time; espeak-ng joins unstressed words to
    /// the next one and misplaces some positions, so the events are anchors for `WordAligner`, which returns
    /// every word of the text.
    static func words(in text: String, events: EspeakEngine.Output, duration: Double) -> [WordTiming] {
        let anchors = events.words.map { (offset: max(0, $0.position - 1), time: Double($0.milliseconds) / 1000) }
        return WordAligner.align(text, anchors: anchors, pauses: events.clauseEnds.map { Double($0) / 1000 }, duration: duration)
    }
}

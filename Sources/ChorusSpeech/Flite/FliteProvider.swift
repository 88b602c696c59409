import ChorusAudio
public import ChorusText
public import ChorusWire
import Foundation

/// Offline text to speech with CMU Flite, in process: the clustergen voices `flite:slt` (female),
/// `flite:rms` (male), `flite:awb` (Scottish male) and the diphone voices `flite:kal16`, `flite:kal`,
/// with `?rate=` and `?pitch=` multipliers (`flite:slt?rate=1.1`). Word timings come from Flite's
/// utterance (each token's first and last phone), aligned to the text by `WordAligner`.
///
/// ```swift
/// let speech = try await FliteProvider().synthesize(SynthesisRequest(voice: "slt", text: "Hi!", outputFormat: "pcm"))
/// ```
public struct FliteProvider: VoiceProvider {
    public let id = BuiltInProvider.flite.rawValue

    public init() {}

    /// The first default voices of a conversation (see `DefaultVoices.flite`).
    public static let defaultVoices = ["slt?rate=1.08", "rms", "awb", "kal16?pitch=1.2"]

    public func defaultVoices() -> (first: [String], later: [String]) { (Self.defaultVoices, []) }

    public func voices() async throws -> [VoiceInfo] {
        FliteVoice.order.map { name in
            let info = FliteVoice.catalog[name]!
            return VoiceInfo(id: VoiceID(provider: id, voice: name), name: info.name, details: "\(info.accent), \(info.gender)")
        }
    }

    /// Flite breaks text into utterances itself at 500 tokens; sentences are synthesized one at a time.
    public func characterLimit(settings: [String: JSONValue]) -> Int { 600 }

    public func outputFormats(settings: [String: JSONValue]) -> [String] { ["pcm"] }

    public func audioAffectingSettings(_ settings: [String: JSONValue]) -> [String: JSONValue] {
        ["flite": .string(FliteEngine.version)]
    }

    public func adjusting(rate: Double, voice: String, settings: [String: JSONValue]) -> (voice: String, settings: [String: JSONValue]) {
        let current = Self.voice(voice, number: "rate") ?? 1
        let adjusted = min(max(current * rate, FliteVoice.rateRange.lowerBound), FliteVoice.rateRange.upperBound)
        return (Self.voice(voice, setting: "rate", to: String(format: "%.2f", adjusted)), settings)
    }

    /// IPA pronunciations go into Flite's lexicon for the request (CMU dictionary phones: `IPA.cmuPhones`); the words
    /// stay as written.
    public func pronunciationDictionary(settings: [String: JSONValue]) -> (@Sendable (Pronunciation) -> Bool)? {
        { Self.lexiconEntry($0) != nil }
    }

    public func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech {
        let voice = try FliteVoice(parsing: request.voice)
        let output = try await FliteEngine.shared.speak(request.text, voice: voice, entries: Self.lexiconEntries(request.pronunciations))
        let format = AudioFormat(sampleRate: output.rate, channels: 1)
        let duration = format.seconds(frames: output.samples.count)
        return SynthesizedSpeech(
            audio: .pcm(AudioBuffer(format: format, samples: PCM16.samples(output.samples))),
            words: Self.words(in: request.text, tokens: output.tokens, duration: duration))
    }

    /// Flite lexicon entries (`word : phones`) for `pronunciations`: the word as written and lowercased (Flite looks up
    /// either), its phones from the IPA; words that are not plain letters (Flite's tokenizer would split them) left out.
    static func lexiconEntries(_ pronunciations: [Pronunciation]) -> [String] {
        pronunciations.flatMap { pronunciation -> [String] in
            guard let phones = lexiconEntry(pronunciation) else { return [] }
            return Set([pronunciation.word, pronunciation.word.lowercased()]).sorted().map { "\($0) : \(phones)" }
        }
    }

    /// A pronunciation's phones for Flite's lexicon, or `nil` when Flite cannot take it (a word of other than ASCII
    /// letters, `'` and `-`, which its tokenizer would split or rename; IPA without CMU phones): the word keeps its alias.
    static func lexiconEntry(_ pronunciation: Pronunciation) -> String? {
        let phones = IPA.cmuPhones(pronunciation.ipa)
        guard !phones.isEmpty, pronunciation.word.allSatisfy({ ($0.isASCII && $0.isLetter) || $0 == "'" || $0 == "-" }) else { return nil }
        return phones.joined(separator: " ")
    }

    /// Flite's tokens, matched in order to the text's words (by letters and digits, case-insensitively),
    /// become anchors; silences between tokens are pauses.
    static func words(in text: String, tokens: [(name: String, start: Double, end: Double)], duration: Double) -> [WordTiming] {
        let textWords = WordAligner.words(in: text)
        func key(_ word: String) -> String { String(word.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }) }
        var anchors: [(offset: Int, time: Double)] = []
        var cursor = 0
        for token in tokens {
            let wanted = key(token.name)
            guard !wanted.isEmpty else { continue }
            if let match = textWords[cursor...].prefix(4).firstIndex(where: { key($0.word) == wanted }) {
                anchors.append((textWords[match].range.lowerBound, token.start))
                cursor = match + 1
            }
        }
        let pauses = zip(tokens, tokens.dropFirst()).filter { $1.start - $0.end > 0.03 }.map(\.0.end) + [tokens.last?.end ?? duration]
        return WordAligner.align(text, anchors: anchors, pauses: pauses, duration: duration)
    }
}

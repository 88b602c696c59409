import ChorusInference
import ChorusSupport
import ChorusText
package import Foundation

/// Kokoro spoken with styles that are no voice file's yet: what voice creation searches with. The model is the
/// process's (`KokoroEngine`), its calls run on the neural voices' threads (`SynthesisThreads`) in the background:
/// only when no render's or listener's speech waits, so renders keep their latency while a voice is being made.
package struct KokoroWorkbench: Sendable {
    let synthesizer: KokoroSynthesizer

    /// Numbers in a style: `KokoroModel.styleRows` rows of `KokoroModel.styleWidth`.
    package static let styleSize = KokoroModel.styleRows * KokoroModel.styleWidth

    /// Opens the model of `folder` (`KokoroModel.folder` unless told).
    /// - Throws: `VoiceError` (`.configuration`) naming the file and what is wrong.
    package static func open(folder: URL = KokoroModel.folder()) async throws -> KokoroWorkbench {
        KokoroWorkbench(synthesizer: try await KokoroEngine.shared.synthesizer(in: folder))
    }

    package var model: KokoroModel { synthesizer.model }

    /// The voices of the model's voices folder, each `styleSize` numbers.
    package var voices: [String: [Float]] { KokoroVoices.of(folder: model.voicesFolder).styles.mapValues(\.values) }

    /// `text` as Kokoro hears it: one string of phoneme symbols per sentence (as `KokoroProvider` reads text in
    /// `language`, an espeak-ng voice).
    /// - Throws: `VoiceError` (`.badRequest`) when espeak-ng reads no words in it.
    package func sentences(of text: String, language: String = "en-us") async throws -> [String] {
        let known = Set(model.vocabulary.keys)
        let english = language.lowercased().hasPrefix("en")
        let clauses = try await EspeakEngine.shared.phonemeClauses(text, voice: language) { ipa in
            IPA.piperPhonemes(ipa, english: english, known: known)
        }
        let sentences = EspeakEngine.sentences(of: clauses).flatMap { PiperProvider.pieces(of: $0, most: KokoroProvider.mostPhonemes) }
            .map { KokoroSynthesizer.trainedSymbols($0, language: language) }
        guard !sentences.isEmpty else {
            throw VoiceError(.badRequest, provider: BuiltInProvider.kokoro.rawValue, message: "no words espeak-ng can read in \"\(text)\"")
        }
        return sentences
    }

    /// `sentences` (from `sentences(of:)`) spoken with `style` (`styleSize` numbers) one after another: mono samples
    /// at `KokoroModel.sampleRate`, each sentence without the silence the model makes after it.
    /// - Throws: `VoiceError` (`.badRequest` for a style of another size; `.unavailable` when the runtime fails).
    package func speak(_ sentences: [String], style: [Float], speed: Double = 1) async throws -> [Float] {
        guard style.count == Self.styleSize, style.allSatisfy(\.isFinite) else {
            throw VoiceError(
                .badRequest, provider: BuiltInProvider.kokoro.rawValue,
                message: "a style of \(style.count) numbers (a Kokoro style is \(Self.styleSize) finite numbers)")
        }
        let synthesizer = self.synthesizer
        let voice = KokoroVoices.Style(values: style)
        let parts = try await withThrowingTaskGroup(of: (Int, [Float]).self) { group in
            for (index, sentence) in sentences.enumerated() {
                group.addTask {
                    let spoken = try await SynthesisThreads.pool.run(background: true) {
                        try synthesizer.speak(sentence, style: voice, speed: speed, urgent: false)
                    }
                    return (index, Array(spoken.samples[..<min(spoken.speechEnd, spoken.samples.count)]))
                }
            }
            var parts = [[Float]](repeating: [], count: sentences.count)
            for try await (index, samples) in group { parts[index] = samples }
            return parts
        }
        return parts.flatMap { $0 }
    }

    /// `body` run on the neural voices' threads in the background, as `speak` is: work that belongs with speaking
    /// (scoring what was spoken) without taking the cores from renders.
    package func onSpeechThreads<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await SynthesisThreads.pool.run(background: true, body)
    }
}

import ChorusListening
import ChorusSpeech
import Foundation

/// How well a made voice is understood: three sentences it was not searched on, read by it and heard back by Whisper
/// (the default model), as the share of their words heard wrong. A speaker model does not hear an accent or a slurred
/// word; this does.
enum Intelligibility {
    static let text =
        "Please remember to bring the blue folder to the meeting on Thursday morning. "
        + "We watched the boats come into the harbor while the sun went down. "
        + "My brother fixed the old radio, and now it plays music all day."

    /// The word error rate of `style` reading `text`, `nil` when no Whisper model can be loaded.
    static func wordErrorRate(of style: [Float], workbench: KokoroWorkbench) async throws -> Double? {
        guard let recognizer = try? await WhisperLoader.shared.recognizer(named: WhisperModel.defaultName) else { return nil }
        let sentences = try await workbench.sentences(of: text, language: StyleSearch.language)
        let spoken = try await workbench.speak(sentences, style: style)
        let heard = try await recognizer.transcribe(spoken, sampleRate: KokoroModel.sampleRate, language: "en")
        return rate(heard: heard.text, said: text)
    }

    /// The words of `text` for comparison: lower case, letters, digits and apostrophes.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !($0.isLetter || $0.isNumber || $0 == "'") }.map(String.init)
    }

    /// Substitutions, insertions and deletions turning `said` into `heard`, over `said`'s words.
    static func rate(heard: String, said: String) -> Double {
        let h = words(heard)
        let r = words(said)
        guard !r.isEmpty else { return h.isEmpty ? 0 : 1 }
        var previous = Array(0...h.count)
        for (i, word) in r.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: h.count)
            for j in 0..<h.count { current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (word == h[j] ? 0 : 1)) }
            previous = current
        }
        return Double(previous[h.count]) / Double(r.count)
    }
}

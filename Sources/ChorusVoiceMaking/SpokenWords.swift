import ChorusListening
import Foundation

/// Whether what was heard as speech is words. Music passes the signal's checks — it is loud, voiced, and one voice to
/// a speaker model — so Whisper listens to the opening of each recording's speech, in whatever language it is (the
/// multilingual model, the language detected; the default model when that one is not installed), and a recording in
/// which it hears fewer than `leastLettersPerSecond` letters a second is refused. Letters, not words: a language
/// written without spaces has few words. A song with words is speech to it.
enum SpokenWords {
    /// Seconds of each recording's speech Whisper hears, and the letters a second it must hear in them (people say
    /// 10–15 in English, 5–8 characters in Japanese; Whisper hears none in music).
    static let heardSeconds = 20.0
    static let leastLettersPerSecond = 2.0

    /// - Throws: `VoiceMakingError` (`.recording`) naming the first recording in which too few letters are heard.
    ///   Without a Whisper model (set-up installs two) nothing is checked.
    static func check(_ recordings: [Enrolment.Recording]) async throws {
        let name = WhisperModel.names().contains(WhisperModel.multilingualName) ? WhisperModel.multilingualName : WhisperModel.defaultName
        guard !recordings.isEmpty, let recognizer = try? await WhisperLoader.shared.recognizer(named: name) else { return }
        let heard = try await recognizer.transcribe(together: recordings.map(\.opening), language: recognizer.model.isEnglishOnly ? "en" : nil)
        for (recording, transcript) in zip(recordings, heard) {
            let seconds = Double(recording.opening.count) / Double(Enrolment.rate)
            let letters = transcript.text.filter(\.isLetter).count
            guard Double(letters) >= leastLettersPerSecond * seconds else {
                throw VoiceMakingError(
                    .recording, subject: recording.file.path,
                    reason: "Whisper hears \(letters == 0 ? "no words" : "almost no words (\(letters) letters)") in its "
                        + "\(Int(seconds.rounded())) s of sound: music or other sound, not speech")
            }
        }
    }
}

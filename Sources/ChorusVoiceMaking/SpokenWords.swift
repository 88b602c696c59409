import ChorusListening
import Foundation

/// Whether what was heard as speech is words. Music passes the signal's checks — it is loud, voiced, and one voice to
/// a speaker model — so Whisper (the default model) listens to the opening of each recording's speech, and a recording
/// in which it hears fewer than `leastWordsPerSecond` words a second is refused. A song with words is speech to it.
enum SpokenWords {
    /// Seconds of each recording's speech Whisper hears, and the words a second it must hear in them (people speak 2–3).
    static let heardSeconds = 20.0
    static let leastWordsPerSecond = 0.5

    /// - Throws: `VoiceMakingError` (`.recording`) naming the first recording in which too few words are heard. Without
    ///   a Whisper model (set-up installs one) nothing is checked.
    static func check(_ recordings: [Enrolment.Recording]) async throws {
        guard !recordings.isEmpty, let recognizer = try? await WhisperLoader.shared.recognizer(named: WhisperModel.defaultName) else { return }
        let heard = try await recognizer.transcribe(together: recordings.map(\.opening), language: "en")
        for (recording, transcript) in zip(recordings, heard) {
            let seconds = Double(recording.opening.count) / Double(Enrolment.rate)
            let words = Intelligibility.words(transcript.text).count
            guard Double(words) >= leastWordsPerSecond * seconds else {
                throw VoiceMakingError(
                    .recording, subject: recording.file.path,
                    reason:
                        "Whisper hears \(words) word\(words == 1 ? "" : "s") in its \(Int(seconds.rounded())) s of sound: music or other sound, not speech"
                )
            }
        }
    }
}

import ChorusSpeech
import ChorusWire
import Foundation

/// How a hosted service's transcription answer is read (OpenAI's and ElevenLabs'): one rule for what counts as a
/// transcription, what counts as a timed word, and how the words end up timed.
enum HostedTranscript {
    /// The answer's JSON object and its `text`, trimmed.
    /// - Throws: `VoiceError` (`.invalidResponse`) quoting the start of the answer, secrets redacted.
    static func answer(_ response: ProviderHTTP.Response, provider: String, http: ProviderHTTP) throws -> (object: [String: Any], text: String) {
        guard let object = ProviderHTTP.jsonObject(response.body), let text = object["text"] as? String else {
            throw VoiceError(
                .invalidResponse, provider: provider,
                message: "the answer is not a transcription (JSON with \"text\"): \(http.redact(String(response.text.prefix(120))))")
        }
        return (object, text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The answer's words, each `item[key]` from `item["start"]` to `item["end"]` (seconds, the end clipped to
    /// `duration`), spelled without surrounding spaces; an empty one is left out.
    /// - Throws: `VoiceError` (`.invalidResponse`) for a word whose times are missing, negative or out of order.
    static func words(_ items: [[String: Any]], key: String, provider: String, duration: Double) throws -> [WordTiming] {
        var words: [WordTiming] = []
        for item in items {
            guard let word = item[key] as? String, let start = seconds(item["start"]), let end = seconds(item["end"]),
                start.isFinite, end.isFinite, start >= 0, end >= start
            else {
                throw VoiceError(.invalidResponse, provider: provider, message: "a word without a valid start and end: \(item)")
            }
            let spelled = word.trimmingCharacters(in: .whitespacesAndNewlines)
            if !spelled.isEmpty { words.append(WordTiming(word: spelled, start: start, end: min(end, duration))) }
        }
        return words
    }

    /// A number of seconds in the answer.
    static func seconds(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    /// The transcript of `request`: `words`' starts refined on its audio (its duration `duration`, the answer's, when
    /// told); text without words is timed by the aligner (`Transcript.timing`); no text, no words. Without words the
    /// duration is the request's.
    static func transcript(
        text: String, language: String, words: [WordTiming], request: SpeechToTextRequest, duration: Double? = nil
    ) -> Transcript {
        if words.isEmpty {
            return text.isEmpty
                ? Transcript(text: "", language: language, duration: request.duration, words: [])
                : Transcript.timing(text: text, language: language, samples: request.samples)
        }
        return Transcript(
            text: text, language: language, duration: duration ?? request.duration,
            words: SpeechOnsets.refine(words, samples: request.samples, rate: WhisperRecognizer.sampleRate))
    }
}

public import ChorusWire
import Foundation

/// What a recognizer heard: the text, each word with when it is spoken (seconds from the start of the audio),
/// and how long the audio was.
public struct Transcript: Sendable, Equatable, Codable {
    public var text: String
    /// The language it was transcribed as (ISO 639-1, e.g. `en`).
    public var language: String
    /// Seconds of audio transcribed.
    public var duration: Double
    public var words: [WordTiming]

    public init(text: String, language: String, duration: Double, words: [WordTiming]) {
        self.text = text
        self.language = language
        self.duration = duration
        self.words = words
    }
}

/// Where audio is cut for a recognizer that hears at most `limit` seconds at a time (Whisper: 30), and into how many
/// pieces to hear it on several cores at once: each cut at the quietest moment near its even share, so that a cut
/// falls between words where it can.
package enum SpeechChunks {
    /// Seconds of audio Whisper is given at most at a time, whole or packed (`WhisperRecognizer.transcribe(together:)`):
    /// its window is 30 s, and 2 s stay free so that a last word's end can be said within it.
    package static let longest = 28.0

    /// Frame ranges of `samples` (mono, `rate` Hz), in order and covering all of it: as many as `limit` needs, and
    /// `pieces` when each would still be `shortest` seconds long; when `limit` needs several, a multiple of `lanes` (as
    /// long as each is still `shortest` long), so that lanes hearing them side by side each hear as much (173 s on two
    /// lanes: eight pieces of 21.6 s, four each, not seven of 24.7 s, four on one lane and three on the other); each at
    /// most `limit` seconds, cut at the quietest 20 ms within `search` seconds of its even split point.
    static func ranges(
        of samples: [Float], rate: Int, pieces wanted: Int = 1, lanes: Int = 1, limit: Double = longest,
        shortest: Double = 6, search: Double = 4
    ) -> [Range<Int>] {
        let total = samples.count
        let most = max(1, Int(limit * Double(rate)))
        let needed = (total + most - 1) / most
        let fitting = Int(Double(total) / max(1, shortest * Double(rate)))
        let parallel = min(max(1, wanted), fitting)
        let lanes = max(1, lanes)
        let even = needed > 1 ? min((needed + lanes - 1) / lanes * lanes, fitting) : 1
        let count = max(1, needed, parallel, even)
        guard count > 1 else { return [0..<total] }
        let window = max(1, rate / 50)  // 20 ms
        let reach = Int(search * Double(rate))
        var cuts = [0]
        for index in 1..<count {
            let previous = cuts[cuts.count - 1]
            let target = total * index / count
            // No piece over `limit`: this one ends by previous + most, and the pieces left can still hold the rest.
            let earliest = max(previous + window, target - reach, total - (count - index) * most)
            let latest = min(previous + most, target + reach, total - window)
            var best = min(previous + most, max(previous + 1, target))
            var quietest = Float.infinity
            var position = earliest
            while position + window <= latest {
                var energy: Float = 0
                for sample in samples[position..<(position + window)] { energy += sample * sample }
                if energy < quietest {
                    quietest = energy
                    best = position + window / 2
                }
                position += window
            }
            cuts.append(best)
        }
        return zip(cuts, cuts.dropFirst() + [total]).map { $0..<$1 }
    }

    /// The loudest 20 ms of a piece below which it holds no speech to hear (dBFS, RMS): Whisper given silence or
    /// a hum makes words up ("you", "[ Silence ]"), so such a piece is not given to it.
    static let silenceDB: Float = -50

    /// Whether `samples` (a piece at `rate`) is quiet throughout: no 20 ms of it reaches `silenceDB`.
    static func isSilent(_ samples: ArraySlice<Float>, rate: Int) -> Bool {
        let window = max(1, rate / 50)
        let least = Float(window) * pow(10, silenceDB / 10)  // the sum of squares of a window at silenceDB
        var start = samples.startIndex
        while start < samples.endIndex {
            let end = min(samples.endIndex, start + window)
            var energy: Float = 0
            for sample in samples[start..<end] { energy += sample * sample }
            if energy * Float(window) / Float(end - start) >= least { return false }
            start = end
        }
        return true
    }
}

extension Transcript {
    /// The transcript in the wire's shape (OpenAI's `verbose_json`): words, and segments made from them.
    public var transcription: Transcription {
        Transcription(
            language: LanguageNames.name(of: language), duration: duration, text: text, words: words,
            segments: Transcription.segments(of: words))
    }
}

/// Whisper's language codes and the English names OpenAI's answers use for them.
enum LanguageNames {
    static let byCode: [String: String] = [
        "en": "english", "zh": "chinese", "de": "german", "es": "spanish", "ru": "russian", "ko": "korean", "fr": "french",
        "ja": "japanese", "pt": "portuguese", "tr": "turkish", "pl": "polish", "ca": "catalan", "nl": "dutch", "ar": "arabic",
        "sv": "swedish", "it": "italian", "id": "indonesian", "hi": "hindi", "fi": "finnish", "vi": "vietnamese", "he": "hebrew",
        "uk": "ukrainian", "el": "greek", "ms": "malay", "cs": "czech", "ro": "romanian", "da": "danish", "hu": "hungarian",
        "ta": "tamil", "no": "norwegian", "th": "thai", "ur": "urdu", "hr": "croatian", "bg": "bulgarian", "lt": "lithuanian",
        "la": "latin", "mi": "maori", "ml": "malayalam", "cy": "welsh", "sk": "slovak", "te": "telugu", "fa": "persian",
        "lv": "latvian", "bn": "bengali", "sr": "serbian", "az": "azerbaijani", "sl": "slovenian", "kn": "kannada",
        "et": "estonian", "mk": "macedonian", "br": "breton", "eu": "basque", "is": "icelandic", "hy": "armenian",
        "ne": "nepali", "mn": "mongolian", "bs": "bosnian", "kk": "kazakh", "sq": "albanian", "sw": "swahili",
        "gl": "galician", "mr": "marathi", "pa": "punjabi", "si": "sinhala", "km": "khmer", "sn": "shona", "yo": "yoruba",
        "so": "somali", "af": "afrikaans", "oc": "occitan", "ka": "georgian", "be": "belarusian", "tg": "tajik",
        "sd": "sindhi", "gu": "gujarati", "am": "amharic", "yi": "yiddish", "lo": "lao", "uz": "uzbek", "fo": "faroese",
        "ht": "haitian creole", "ps": "pashto", "tk": "turkmen", "nn": "nynorsk", "mt": "maltese", "sa": "sanskrit",
        "lb": "luxembourgish", "my": "myanmar", "bo": "tibetan", "tl": "tagalog", "mg": "malagasy", "as": "assamese",
        "tt": "tatar", "haw": "hawaiian", "ln": "lingala", "ha": "hausa", "ba": "bashkir", "jw": "javanese", "su": "sundanese",
        "yue": "cantonese",
    ]

    /// The English name of Whisper language `code`; the code itself when it is not one.
    static func name(of code: String) -> String { byCode[code.lowercased()] ?? code }

    /// The code of a language given by its English name (`english` → `en`, as OpenAI's `verbose_json` says it) or by
    /// ISO 639-3 (`eng`, as ElevenLabs says it, for the languages below); a code is kept; anything else as given.
    static func code(of language: String) -> String {
        let lowered = language.lowercased()
        if byCode[lowered] != nil { return lowered }
        if let code = byName[lowered] { return code }
        return threeLetter[lowered] ?? language
    }

    private static let byName: [String: String] = Dictionary(byCode.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
    private static let threeLetter: [String: String] = [
        "eng": "en", "deu": "de", "ger": "de", "spa": "es", "fra": "fr", "fre": "fr", "ita": "it", "por": "pt", "nld": "nl",
        "dut": "nl", "rus": "ru", "zho": "zh", "chi": "zh", "cmn": "zh", "jpn": "ja", "kor": "ko", "ara": "ar", "hin": "hi",
        "tur": "tr", "pol": "pl", "swe": "sv", "ukr": "uk", "ell": "el", "gre": "el", "ces": "cs", "cze": "cs", "ron": "ro",
        "rum": "ro", "dan": "da", "fin": "fi", "nor": "no", "hun": "hu", "heb": "he", "vie": "vi", "ind": "id", "tha": "th",
    ]
}

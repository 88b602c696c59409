import ChorusAudio
import ChorusSpeechTestSupport
import ChorusTestSupport
import Testing

@testable import ChorusText

/// Kokoro-82M, the model set-up joins from its wheels and prepares (`scripts/prepare_kokoro.py`), with the Japanese
/// pack's five voices, run in process on ONNX Runtime. Real phonemes in, real audio out, heard back by the Whisper
/// model; broken voice files and models refused by name while the other voices keep working.
///
/// What the Whisper model hears of the voices; the voices alone are tested in ChorusSpeechTests.
@Suite("Kokoro voices (ONNX Runtime)")
struct KokoroTests {
    @Test("a sentence is heard back word for word by the Whisper model, and its words start where Whisper hears them")
    func heardBack() async throws {
        let (buffer, words) = try await KokoroSpeech.speak(voice: "jm_kumo")
        #expect(buffer.format == AudioFormat(sampleRate: 24_000, channels: 1))
        #expect((3.0...10.0).contains(buffer.duration), "\(buffer.duration) s")
        #expect(buffer.peak > 0.05 && buffer.peak <= 1.5)
        #expect(words.map(\.word) == WordAligner.words(in: KokoroSpeech.text).map(\.word))
        #expect(zip(words, words.dropFirst()).allSatisfy { $0.end <= $1.start + 1e-9 && $0.start < $0.end }, "\(words)")
        #expect(words.last.map { $0.end <= buffer.duration + 1e-6 } == true)
        let (heard, differences) = try await PiperTests.heard(buffer, words: words)
        // At most two words of eighteen missed: the pack's voices are Japanese, and even its clearest (jm_kumo) drops a
        // final "d" that Whisper then hears as another word ("moved to" heard as "move the").
        #expect(WordErrors.rate(heard.text, KokoroSpeech.text) <= 0.12, "\(heard.text)")
        #expect(differences.count >= words.count - 3, "\(heard.words)")
        #expect(differences.filter { $0 < 0.1 }.count >= differences.count * 8 / 10, "\(differences)")
    }

    @Test("Chorus's own English voices are heard almost word for word by the Whisper model")
    func englishVoicesHeard() async throws {
        for voice in ["af_linden", "af_wren", "am_alder", "am_rowan"] {
            let (buffer, words) = try await KokoroSpeech.speak(voice: voice)
            #expect(words.map(\.word) == WordAligner.words(in: KokoroSpeech.text).map(\.word))
            let (heard, _) = try await PiperTests.heard(buffer, words: words)
            // As for the pack's voices, at most two words of eighteen missed ("moved to" heard as "move the"); numerals
            // count as the words they say.
            let (wrong, said) = HumanSpeech.errors(heard.text, KokoroSpeech.text)
            #expect(wrong <= 2 && said == 18, "\(voice): \(heard.text)")
        }
    }
}

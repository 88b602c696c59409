import ChorusAudio
public import ChorusFixtures
public import Foundation
public import Testing

/// The API key the tests give the HTTP providers and stubs: no part of it may ever appear in an error, a log or the
/// cache (`expectSecretFree`).
public let testKey = "sk-test-SECRET-0123456789abcdef"

/// Fake provider audio: a 220 Hz tone lasting `perCharacter` seconds per character, with 20 ms of silence each side.
public enum StubAudio {
    public static let perCharacter = 0.01
    public static let edge = 0.02

    public static func pcm16(for text: String, rate: Int = 24_000) -> Data {
        let format = AudioFormat(sampleRate: rate, channels: 1)
        let tone = SignalGenerator.concatenate([
            SignalGenerator.silence(seconds: edge, format: format),
            SignalGenerator.tone(frequency: 220, amplitude: 0.3, seconds: max(0.3, Double(text.count) * perCharacter), format: format),
            SignalGenerator.silence(seconds: edge, format: format),
        ])
        var data = Data(capacity: tone.samples.count * 2)
        for sample in tone.samples {
            withUnsafeBytes(of: Int16(max(-32_768, min(32_767, (sample * 32_768).rounded()))).littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// ElevenLabs `with-timestamps` JSON: audio plus per-character alignment.
    public static func elevenLabs(_ request: StubServer.Request, format: String = "pcm_24000") -> StubServer.Response {
        let text = request.json?["text"] as? String ?? ""
        let audio: Data
        if format.hasPrefix("mp3") {
            let directory = try! TemporaryDirectory()
            let url = directory.file("a.mp3")
            try! ClipEncoding.mp3.write(AudioFileReader(data: wav(pcm16(for: text)), name: "x").readAll(), to: url)
            audio = try! Data(contentsOf: url)
        } else {
            audio = pcm16(for: text)
        }
        let characters = text.map(String.init)
        let starts = characters.indices.map { edge + Double($0) * perCharacter }
        return .json(
            200,
            [
                "audio_base64": audio.base64EncodedString(),
                "alignment": [
                    "characters": characters, "character_start_times_seconds": starts,
                    "character_end_times_seconds": starts.map { $0 + perCharacter },
                ],
                "normalized_alignment": NSNull(),
            ], headers: ["request-id": "req\(UUID().uuidString.prefix(8))", "character-cost": "\(text.count)"])
    }

    /// A minimal WAV around 24 kHz mono 16-bit PCM.
    public static func wav(_ pcm: Data) -> Data {
        var data = Data("RIFF".utf8)
        func u32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { data.append(contentsOf: $0) } }
        func u16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { data.append(contentsOf: $0) } }
        u32(36 + pcm.count)
        data.append(contentsOf: Data("WAVEfmt ".utf8))
        u32(16)
        u16(1)
        u16(1)
        u32(24_000)
        u32(48_000)
        u16(2)
        u16(16)
        data.append(contentsOf: Data("data".utf8))
        u32(pcm.count)
        data.append(pcm)
        return data
    }
}

/// Fails the test when `text` holds `testKey` or any part of it.
public func expectSecretFree(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!text.contains(testKey), "the API key leaked: \(text)", sourceLocation: sourceLocation)
    #expect(!text.contains("SECRET"), "part of the API key leaked: \(text)", sourceLocation: sourceLocation)
}

import ChorusFixtures
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusListening
@testable import ChorusWire

/// Offline transcription on ONNX Runtime with the model set-up converted from CTranslate2's Whisper tiny.en
/// (`scripts/whisper_to_onnx.py`): real speech in, words out; broken models refused with the file and the reason.
///
/// The engine's cache of Whisper's transcripts; the recognizer is tested in ChorusListeningTests.
@Suite("Whisper offline transcription (ONNX Runtime)")
struct WhisperTests {
    @Test("the transcript cache: keyed by the bytes, the model's files and the options; a damaged entry is a miss; least recently used go first")
    func transcriptCache() throws {
        let directory = try TemporaryDirectory(prefix: "chorus-transcripts")
        let cache = try TranscriptCache(directory: directory.url, maxEntries: 2)
        let model = try WhisperModel.named(WhisperModel.defaultName).identity
        let transcript = Transcript(text: "Hello there.", language: "en", duration: 1.5, words: [WordTiming(word: "Hello", start: 0.1, end: 0.5)])
        let key = TranscriptCache.key(audio: Data([1, 2, 3]), model: model, options: ["a"])
        #expect(key.count == 64 && key != TranscriptCache.key(audio: Data([1, 2, 4]), model: model, options: ["a"]))
        #expect(key != TranscriptCache.key(audio: Data([1, 2, 3]), model: model, options: ["b"]))
        #expect(cache.lookup(key) == nil)
        cache.store(key, transcript)
        #expect(cache.lookup(key) == transcript)
        let file = directory.url.appendingPathComponent("transcripts/v1/\(key.prefix(2))/\(key).json")
        try Data("{not json".utf8).write(to: file)
        #expect(cache.lookup(key) == nil)
        let keys = (0..<3).map { TranscriptCache.key(audio: Data([UInt8($0)]), model: model, options: []) }
        for (index, key) in keys.enumerated() {
            cache.store(key, transcript)
            // Modification times one second apart, oldest first, as use would leave them.
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: Double(index - 10))],
                ofItemAtPath: directory.url.appendingPathComponent("transcripts/v1/\(key.prefix(2))/\(key).json").path)
        }
        try FileManager.default.removeItem(at: file)
        cache.evict()
        #expect(cache.lookup(keys[0]) == nil && cache.lookup(keys[1]) == transcript && cache.lookup(keys[2]) == transcript)
    }
}

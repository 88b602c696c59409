import ChorusAudio
import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech
@testable import ChorusSupport
@testable import ChorusWire

/// What a listener of a stream waits for first: its first message, spoken alone and urgently (Kokoro then runs it on
/// every core, `KokoroSynthesizer`); a render to a file sources ahead at once, nothing urgent.
@Suite("A stream's first message")
struct StreamFirstTests {
    /// A voice that notes, for each message, whether it was urgent, when it began and ended. Others take 0.1 s; the
    /// first takes until another has begun, or 2 s (so a render that asks for others while it is spoken, however
    /// slowly a loaded machine starts them, is seen to).
    final class Recorder: VoiceProvider {
        struct Call: Sendable {
            var text: String
            var urgent: Bool
            var began: Date
            var ended: Date
        }

        let id = "recorder"
        let calls = Locked([Call]())
        let begun = Locked(0)

        func voices() async throws -> [VoiceInfo] { [VoiceInfo(id: VoiceID(provider: id, voice: "one"), name: "one")] }
        func characterLimit(settings: [String: JSONValue]) -> Int { 1_000 }
        func outputFormats(settings: [String: JSONValue]) -> [String] { ["pcm"] }
        func audioAffectingSettings(_ settings: [String: JSONValue]) -> [String: JSONValue] { [:] }

        func synthesize(_ request: SynthesisRequest) async throws -> SynthesizedSpeech {
            let urgent = SynthesisThreads.isUrgent
            let began = Date()
            begun.withLock { $0 += 1 }
            if request.text == "Message 0." {
                while begun.value < 2 && Date().timeIntervalSince(began) < 2 { try await Task.sleep(nanoseconds: 10_000_000) }
            } else {
                try await Task.sleep(nanoseconds: 100_000_000)
            }
            calls.withLock { $0.append(Call(text: request.text, urgent: urgent, began: began, ended: Date())) }
            let tone = (0..<7_200).map { Float(sin(Double($0) * 2 * .pi * 220 / 24_000)) * 0.3 }
            return SynthesizedSpeech(audio: .pcm(AudioBuffer(format: AudioFormat(sampleRate: 24_000, channels: 1), samples: tone)), words: nil)
        }
    }

    @Test("streamed, the first message is urgent and spoken before any other is asked for; to a file, they are asked for at once, none urgent")
    func firstAlone() async throws {
        for streamed in [true, false] {
            let directory = try TemporaryDirectory()
            let recorder = Recorder()
            let chorus = try Chorus(
                configuration: Chorus.Configuration(
                    registry: VoiceRegistry(providers: [recorder]), cacheDirectory: directory.file("cache"), providerConcurrency: 4))
            let conversation = Conversation(
                messages: (0..<4).map {
                    Conversation.Message(speaker: "A", text: "Message \($0).", voice: VoiceID(provider: "recorder", voice: "one"))
                })
            var outputs = RenderOutputs(audio: directory.file("out.mp3"))
            let stream = AudioChunkStream()
            let listener = Task { for try await _ in stream {} }
            if streamed { outputs.stream = stream } else { stream.finish() }
            let result = try await chorus.render(conversation, to: outputs).result()
            try await listener.value
            #expect(result.timeline.segments.count == 4)
            let calls = recorder.calls.value.sorted { $0.began < $1.began }
            #expect(calls.count == 4)
            let first = try #require(calls.first { $0.text == "Message 0." })
            let others = calls.filter { $0.text != "Message 0." }
            if streamed {
                #expect(first.urgent && others.allSatisfy { !$0.urgent })
                #expect(others.allSatisfy { $0.began >= first.ended }, "the others began after the first ended")
            } else {
                #expect(calls.allSatisfy { !$0.urgent })
                #expect(others.contains { $0.began < first.ended }, "another began while the first was spoken")
            }
        }
    }
}

import ChorusAudio
import ChorusTestSupport
import ChorusVoices
import Foundation
import Testing

@Suite("Conversation files")
struct ConversationTests {
    func parse(_ json: String) throws -> Conversation {
        try Conversation.parse(Data(json.utf8), baseDirectory: URL(fileURLWithPath: "/clips"), name: "c.json")
    }

    @Test("paths resolve against the file's folder; unknown fields are ignored")
    func parses() throws {
        let conversation = try parse(#"{"gap_ms": 250, "title": "x", "messages": [{"speaker": "S", "audio": "a/b.mp3", "mood": 1}, {"speaker": "M", "audio": "/abs/c.wav", "text": "Hi"}]}"#)
        #expect(conversation.gapMilliseconds == 250)
        guard case .file(let first, let label)? = conversation.messages[0].audio, case .file(let second, _)? = conversation.messages[1].audio else {
            Issue.record("expected file clips")
            return
        }
        #expect(first.path == "/clips/a/b.mp3" && label == "a/b.mp3")
        #expect(second.path == "/abs/c.wav")
        #expect(conversation.messages[1].text == "Hi")
        #expect(try parse(#"{"messages": [{"speaker": "S", "text": "x"}]}"#).gapMilliseconds == RenderOptions.defaultGapMilliseconds)
    }

    @Test("errors name the message index and the field", arguments: [
        (#"{"messages": [{"speaker": "S", "audio": "a.mp3"}, {"audio": "b.mp3"}]}"#, "messages[1]: missing required field \"speaker\""),
        (#"{"messages": [{"speaker": 5, "audio": "a.mp3"}]}"#, "messages[0].speaker: must be a string"),
        (#"{"messages": [{"speaker": "S", "audio": 3}]}"#, "messages[0].audio: must be a string"),
        (#"{"messages": [{"speaker": "S"}]}"#, "messages[0]: needs \"audio\""),
        (#"{"messages": []}"#, "has no messages"),
        (#"{"speakers": []}"#, "missing required field \"messages\""),
        (#"{"messages": {"speaker": "S"}}"#, "messages: must be an array"),
        (#"{"gap_ms": "300", "messages": [{"speaker": "S", "audio": "a.mp3"}]}"#, "gap_ms: must be a number"),
        (#"{"gap_ms": -5, "messages": [{"speaker": "S", "audio": "a.mp3"}]}"#, "gap_ms -5: must be between 0 and 60000 milliseconds"),
        (#"{"voices": {"Sam": "nova"}, "messages": [{"speaker": "S", "text": "x"}]}"#, "voices[\"Sam\"]: \"nova\" is not a voice id"),
        (#"{"messages": [{"speaker": "S", "text": "x", "voice": ":x"}]}"#, "messages[0].voice: \":x\" is not a voice id"),
        (#"{"voice_settings": {"openai": 3}, "messages": [{"speaker": "S", "text": "x"}]}"#, "voice_settings.openai: must be an object"),
        (#"{"messages": [{"speaker": "  ", "audio": "a.mp3"}]}"#, "messages[0].speaker: must not be empty"),
        (#"{"messages": [{"speaker": "S", "audio": "a.mp3"},"#, "not valid JSON"),
    ])
    func errors(json: String, expected: String) async {
        await expectAudioError(.invalidConversation, mentioning: ["c.json", expected]) { _ = try parse(json) }
    }

    @Test("a missing conversation file is named")
    func missingFile() async {
        await expectAudioError(.fileNotFound, mentioning: ["/nonexistent/c.json"]) {
            _ = try Conversation.load(from: URL(fileURLWithPath: "/nonexistent/c.json"))
        }
    }
}

import ChorusAudio
import ChorusConversation
import ChorusSupport
import ChorusTestSupport
import Foundation
import Testing

@Suite("Conversation files")
struct ConversationTests {
    func parse(_ json: String) throws -> Conversation {
        try Conversation.parse(Data(json.utf8), baseDirectory: URL(fileURLWithPath: "/clips"), name: "c.json")
    }

    @Test("paths resolve against the file's folder; unknown fields are ignored")
    func parses() throws {
        let conversation = try parse(
            #"{"gap_ms": 250, "title": "x", "messages": [{"speaker": "S", "audio": "a/b.mp3", "mood": 1}, {"speaker": "M", "audio": "/abs/c.wav", "text": "Hi"}]}"#
        )
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

    @Test(
        "errors name the message index and the field",
        arguments: [
            (#"{"messages": [{"speaker": "S", "audio": "a.mp3"}, {"audio": "b.mp3"}]}"#, "messages[1]: missing required field \"speaker\""),
            (#"{"messages": [{"speaker": 5, "audio": "a.mp3"}]}"#, "messages[0].speaker: must be a string"),
            (#"{"messages": [{"speaker": "S", "audio": 3}]}"#, "messages[0].audio: must be a string"),
            (#"{"messages": [{"speaker": "S"}]}"#, "messages[0]: needs \"audio\""),
            (#"{"messages": []}"#, "messages: must not be empty"),
            (#"{"speakers": []}"#, "missing required field \"messages\""),
            (#"{"messages": {"speaker": "S"}}"#, "messages: must be an array"),
            (#"{"gap_ms": "300", "messages": [{"speaker": "S", "audio": "a.mp3"}]}"#, "gap_ms: must be a number"),
            (#"{"gap_ms": -5, "messages": [{"speaker": "S", "audio": "a.mp3"}]}"#, "gap_ms -5: must be between 0 and 60000 milliseconds"),
            (#"{"voices": {"Sam": "nova"}, "messages": [{"speaker": "S", "text": "x"}]}"#, "voices.Sam: \"nova\" is not a voice id"),
            (#"{"messages": [{"speaker": "S", "text": "x", "voice": ":x"}]}"#, "messages[0].voice: \":x\" is not a voice id"),
            (#"{"voice_settings": {"openai": 3}, "messages": [{"speaker": "S", "text": "x"}]}"#, "voice_settings.openai: must be an object"),
            (#"{"messages": [{"speaker": "  ", "audio": "a.mp3"}]}"#, "messages[0].speaker: must not be empty"),
            (#"{"messages": [{"speaker": "S", "audio": "a.mp3"},"#, "not valid JSON"),
            // A file is read as a render request is (one reading of both); a request's clip forms name files here.
            (#"{"messages": [{"speaker": "S", "clip": "9f86d0"}]}"#, "messages[0]: a conversation file names its clips' files as \"audio\""),
            (#"{"music": {"level_lu": -20}, "messages": [{"speaker": "S", "text": "x"}]}"#, "music.audio: missing required field (its audio file)"),
            (#"{"lexicon": "family", "messages": [{"speaker": "S", "text": "x"}]}"#, "lexicon: must be an object of entries"),
        ])
    func errors(json: String, expected: String) async {
        let error = await expectError(ConversationError.self, mentioning: ["c.json", expected]) { _ = try parse(json) }
        #expect(error?.code == .invalid)
    }

    @Test("a missing conversation file is named")
    func missingFile() async {
        let error = await expectError(ConversationError.self, mentioning: ["/nonexistent/c.json"]) {
            _ = try Conversation.load(from: URL(fileURLWithPath: "/nonexistent/c.json"))
        }
        #expect(error?.code == .fileNotFound)
    }
}

/// The one validation files and service requests share (`Conversation.validated`).
@Suite("Conversation validation")
struct ConversationValidationTests {
    @Test("text that is only whitespace counts as none, in a file as in a request; a message then needs its clip")
    func blankText() throws {
        let file = try Conversation.parse(
            Data(#"{"messages": [{"speaker": "A", "audio": "a.mp3", "text": "  \n "}]}"#.utf8),
            baseDirectory: URL(fileURLWithPath: "/tmp"), name: "c.json")
        #expect(file.messages[0].text == nil)
        let request = try Conversation.validated(
            [.init(speaker: "A", audio: .data(Data([1]), label: "clip"), text: " ")], gapMilliseconds: nil,
            audioFields: #""clip""#, name: "request")
        #expect(request.messages[0].text == nil && request.gapMilliseconds == RenderOptions.defaultGapMilliseconds)
        #expect {
            try Conversation.validated(
                [.init(speaker: "A", text: "\t")], gapMilliseconds: nil, audioFields: #""clip" or "audio_base64""#, name: "request")
        } throws: { error in
            (error as? ConversationError).map { $0.subject == "messages[0]" && $0.reason.contains(#""clip" or "audio_base64" or "text""#) } ?? false
        }
    }

    @Test(
        "each refusal names its field",
        arguments: [
            ([Conversation.Draft(speaker: " ", text: "x")], 300, [:], "messages[0].speaker"),
            ([Conversation.Draft(speaker: "A", text: "x", voice: "nova")], 300, [:], "messages[0].voice"),
            ([Conversation.Draft(speaker: "A", text: "x")], 60_001, [:], "gap_ms"),
            ([Conversation.Draft(speaker: "A", text: "x")], 300, ["Sam": "nova"], "voices.Sam"),
            ([], 300, [:], "messages"),
        ] as [([Conversation.Draft], Int, [String: String], String)])
    func fields(drafts: [Conversation.Draft], gap: Int, voices: [String: String], field: String) {
        #expect {
            try Conversation.validated(drafts, gapMilliseconds: gap, voices: voices, audioFields: "\"audio\"", name: "c")
        } throws: { error in
            (error as? any InputError)?.subject == field
        }
        #expect {
            try Conversation.validated(
                [.init(speaker: "A", text: "x")], gapMilliseconds: nil, voiceSettings: ["openai": .string("fast")],
                fallbackVoice: ("espeak", "output.fallback_voice"), audioFields: "\"audio\"", name: "c")
        } throws: { error in
            ["voice_settings.openai", "output.fallback_voice"].contains((error as? any InputError)?.subject ?? "")
        }
    }
}

/// A render's identity (`RenderOptions.identity`) takes every setting that shapes the output, by reflection.
@Suite("Render identity")
struct RenderIdentityTests {
    @Test("every stored setting of RenderOptions is in the identity unless it is listed as not shaping the output")
    func everySettingCounts() {
        var options = RenderOptions()
        options.sampleRate = 22_050
        let names = Set(Mirror(reflecting: options).children.compactMap(\.label))
        let identity = Set(options.identity(for: .mp3).keys)
        #expect(
            names == identity.union(RenderOptions.notShapingOutput),
            "not classified: \(names.subtracting(identity.union(RenderOptions.notShapingOutput)))")
        #expect(identity.isDisjoint(with: RenderOptions.notShapingOutput))
    }

    @Test("each setting that shapes MP3 changes the identity; ones without effect for the format do not")
    func changesCount() {
        let base = RenderOptions()
        var changed: [RenderOptions] = []
        var option = base
        option.mp3Quality = 2
        changed.append(option)
        option = base
        option.fadeMilliseconds = 8
        changed.append(option)
        option = base
        option.truePeakCeiling = -2
        changed.append(option)
        option = base
        option.trimmer.marginMilliseconds = 40
        changed.append(option)
        option = base
        option.targetLoudness = -19
        changed.append(option)
        option = base
        option.sampleRate = 48_000
        changed.append(option)
        for other in changed { #expect(other.identity(for: .mp3) != base.identity(for: .mp3)) }
        // No effect: how it is computed, LAME's quality for FLAC, the bit rate of lossless output, the loudness without normalizing.
        option = base
        option.jobs = 1
        option.serialEncode = true
        #expect(option.identity(for: .mp3) == base.identity(for: .mp3))
        option = base
        option.mp3Quality = 2
        option.bitRate = 64_000
        #expect(option.identity(for: .flac) == base.identity(for: .flac))
        var plain = base
        plain.normalize = false
        var quieter = plain
        quieter.targetLoudness = -23
        #expect(plain.identity(for: .mp3) == quieter.identity(for: .mp3))
        // The format's own default sample rate is spelled out.
        #expect(base.identity(for: .ogg)["sampleRate"] == .number(48_000))
    }
}

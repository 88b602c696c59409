import Foundation
import Testing

@testable import ChorusSupport
@testable import ChorusWire

/// The JSON the service and its clients exchange: field names on the wire, decoding errors that name the field, the
/// budget that refuses expensive bodies before they are built, and the canonical text identities are hashed from.
@Suite("Wire types")
struct WireTests {
    @Test("a render request reads and writes the wire's snake_case names, and comes back equal")
    func renderRequestRoundTrip() throws {
        let json = #"""
            {"gap_ms": 120, "voices": {"Ann": "espeak:en"}, "voice_settings": {"openai": {"speed": 1.2}},
             "messages": [{"speaker": "Ann", "text": "Hi", "voice": "flite:slt"}, {"speaker": "Ben", "clip": "ab12", "audio_base64": "AAAA"}],
             "output": {"format": "ogg", "sample_rate": 48000, "channels": 2, "bitrate": 96000, "loudness": -19, "normalize": false,
                        "trim": false, "chapters": false, "fallback_voice": "espeak:en-us"}}
            """#
        let request = try WireDecoding.decode(RenderRequest.self, from: Data(json.utf8))
        #expect(request.gapMs == 120 && request.voices == ["Ann": "espeak:en"])
        #expect(request.messages[1].clip == "ab12" && request.messages[1].audioBase64 == "AAAA" && request.messages[0].voice == "flite:slt")
        let output = try #require(request.output)
        #expect(output.sampleRate == 48_000 && output.channels == 2 && output.bitrate == 96_000 && output.loudness == -19)
        #expect(output.normalize == false && output.trim == false && output.chapters == false && output.fallbackVoice == "espeak:en-us")
        #expect(request.voiceSettings?["openai"] == .object(["speed": .number(1.2)]))
        let written = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        for name in ["gap_ms", "voice_settings", "audio_base64", "sample_rate", "fallback_voice"] { #expect(written.contains("\"\(name)\"")) }
        #expect(try JSONDecoder().decode(RenderRequest.self, from: Data(written.utf8)) == request)
    }

    @Test(
        "a wrong body is refused naming the field and saying what it must be",
        arguments: [
            (#"{"messages": [{"text": "x"}]}"#, "messages[0]: missing required field \"speaker\"", "messages[0].speaker"),
            (#"{"messages": [], "gap_ms": "300"}"#, "gap_ms: must be a number", "gap_ms"),
            (#"{"messages": [{"speaker": 7}]}"#, "messages[0].speaker: must be a string", "messages[0].speaker"),
            (#"{"messages": "all"}"#, "messages: must be an array", "messages"),
            (#"{"messages": [}"#, "not valid JSON", nil),
            ("", "the body is empty; send JSON", nil),
        ] as [(String, String, String?)])
    func namedErrors(json: String, message: String, field: String?) {
        #expect {
            try WireDecoding.decode(RenderRequest.self, from: Data(json.utf8))
        } throws: { error in
            guard let error = error as? RequestBodyError, error.kind == .invalid else { return false }
            return error.message.hasPrefix(message) && error.field == field
        }
    }

    @Test("the budget refuses deep nesting, too many containers and too many messages before decoding; strings do not count")
    func budget() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(throws: RequestBodyError.self) { try JSONBudget().check(Data(deep.utf8)) }
        let shallow = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        try JSONBudget().check(Data(shallow.utf8))
        let many = "[" + Array(repeating: "{}", count: 100_001).joined(separator: ",") + "]"
        #expect(throws: RequestBodyError.self) { try JSONBudget().check(Data(many.utf8)) }
        // Brackets inside strings (escaped quotes included) are text, not structure.
        let quoted = #"{"messages": [{"speaker": "a", "text": "\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}]}"#
        try JSONBudget(maxDepth: 4).check(Data(quoted.utf8))
        let budget = JSONBudget(arrayKey: "messages", maxArrayElements: 3)
        try budget.check(Data(#"{"messages": [{}, {}, {},]}"#.utf8))
        #expect {
            try budget.check(Data(#"{"messages": [{}, {}, {}, {}], "other": [1, 2, 3, 4, 5]}"#.utf8))
        } throws: { error in
            (error as? RequestBodyError).map { $0.kind == .tooLarge && $0.field == "messages" } ?? false
        }
        // Only the top-level array of that name is counted.
        try budget.check(Data(#"{"x": {"messages": [1, 2, 3, 4, 5]}, "messages": [1]}"#.utf8))
    }

    @Test("canonical text sorts keys, writes whole numbers without a point and escapes control characters: equal values, equal text")
    func canonicalText() throws {
        let a = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"b": [1, 2.5, true, null], "a": "x\"y\n\u0001"}"#.utf8))
        let b = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"a": "x\"y\n\u0001", "b": [1.0, 2.5, true, null]}"#.utf8))
        #expect(a == b)
        #expect(a.canonicalText == #"{"a":"x\"y\n\u0001","b":[1,2.5,true,null]}"#)
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data(a.canonicalText.utf8)) == a)
    }

    @Test("a timeline written by the service reads back with its words, fallback flags and speakers")
    func timeline() throws {
        let json = #"""
            {"duration": 1.5, "samples": 66150, "sample_rate": 44100, "channels": 1, "gap_ms": 300,
             "segments": [{"index": 0, "speaker": "Ann", "start": 0, "end": 1.5, "start_sample": 0, "end_sample": 66150, "text": "Hi there",
                           "source": "espeak:en", "gain_db": 2.5, "voice": "espeak:en", "fallback": true,
                           "words": [{"word": "Hi", "start": 0.1, "end": 0.4}, {"word": "there", "start": 0.4, "end": 0.9}]}],
             "speakers": [{"name": "Ann", "seconds": 1.5, "segments": [0]}]}
            """#
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(json.utf8))
        #expect(timeline.samples == 66_150 && timeline.segments[0].words?.map(\.word) == ["Hi", "there"] && timeline.segments[0].fallback == true)
        #expect(timeline.speakers.first?.segments == [0])
        let again = try JSONDecoder().decode(Timeline.self, from: JSONEncoder().encode(timeline))
        #expect(again.segments[0].endSample == 66_150 && again.segments[0].words?.last?.end == 0.9)
    }

    @Test("the service's output defaults are one of its formats, and the version is what the user agent says")
    func defaultsAndVersion() {
        #expect(OutputSettings.formats.contains(OutputSettings.defaultFormat))
        #expect(Set(OutputSettings.formats).count == OutputSettings.formats.count)
        #expect(ChorusVersion.userAgent == "chorus/\(ChorusVersion.current)")
        #expect(ChorusVersion.current.split(separator: ".").count == 3)
    }
}

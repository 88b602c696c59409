import ChorusAudio
import ChorusConversation
import ChorusTestSupport
import ChorusWire
import Foundation
import Testing

@testable import ChorusService
@testable import ChorusSpeech
@testable import ChorusText

/// The OpenAPI document states the service's rules as the code has them: a default or a range changed in one place
/// and not in the other fails here.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    static func schema(_ name: String) throws -> [String: Any] {
        let document = try #require(try JSONSerialization.jsonObject(with: OpenAPIDocument.data()) as? [String: Any])
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        return try #require(schemas[name] as? [String: Any])
    }

    static func property(_ schema: [String: Any], _ name: String) throws -> [String: Any] {
        try #require((schema["properties"] as? [String: Any])?[name] as? [String: Any], "no property \(name)")
    }

    @Test("output settings: the formats, and every default and range, are the code's")
    func outputDefaults() throws {
        let output = try Self.schema("OutputSettings")
        let format = try Self.property(output, "format")
        #expect(format["enum"] as? [String] == OutputSettings.formats)
        #expect(format["default"] as? String == OutputSettings.defaultFormat)
        #expect(try Self.property(output, "normalize")["default"] as? Bool == OutputSettings.defaultNormalize)
        #expect(try Self.property(output, "trim")["default"] as? Bool == OutputSettings.defaultTrim)
        #expect(try Self.property(output, "chapters")["default"] as? Bool == OutputSettings.defaultChapters)
        let channels = try Self.property(output, "channels")
        #expect(channels["enum"] as? [Int] == Array(RenderOptions.channelRange) && channels["default"] as? Int == RenderOptions().channels)
        #expect(try Self.property(output, "bitrate")["default"] as? Int == RenderOptions.defaultBitRate)
        let loudness = try Self.property(output, "loudness")
        #expect(loudness["default"] as? Double == RenderOptions.defaultLoudness)
        #expect(
            loudness["minimum"] as? Double == RenderOptions.loudnessRange.lowerBound
                && loudness["maximum"] as? Double == RenderOptions.loudnessRange.upperBound)
    }

    @Test("render requests: the gap's range and default, and the message limit, are the code's")
    func requestLimits() throws {
        let request = try Self.schema("RenderRequest")
        let gap = try Self.property(request, "gap_ms")
        #expect(gap["minimum"] as? Int == RenderOptions.gapRange.lowerBound && gap["maximum"] as? Int == RenderOptions.gapRange.upperBound)
        #expect(gap["default"] as? Int == RenderOptions.defaultGapMilliseconds)
        #expect(try Self.property(request, "messages")["maxItems"] as? Int == ServiceConfiguration.defaults.maxMessages)
    }

    @Test("lexicons and text reading: the entry limit, the lengths, the name's pattern, the emoji modes and defaults are the code's")
    func lexiconLimits() throws {
        let upload = try Self.schema("LexiconUpload")
        #expect(try Self.property(upload, "entries")["maxProperties"] as? Int == Lexicon.maximumEntries)
        #expect((upload["description"] as? String)?.contains("262,144") == true && LexiconStore.maximumBytes == 262_144)
        let entry = try #require((try Self.schema("LexiconEntry"))["oneOf"] as? [[String: Any]])
        #expect(entry[0]["maxLength"] as? Int == Lexicon.maximumLength)
        let ipa = try #require((entry[1]["properties"] as? [String: Any])?["ipa"] as? [String: Any])
        #expect(ipa["maxLength"] as? Int == IPA.maximumLength)
        let request = try Self.schema("RenderRequest")
        #expect(try Self.property(request, "emoji")["enum"] as? [String] == TextReading.Emoji.allCases.map(\.rawValue))
        #expect(try Self.property(request, "emoji")["default"] as? String == TextReading().emoji.rawValue)
        #expect(try Self.property(request, "language")["default"] as? String == TextReading.defaultLanguage)
        let pattern = try #require(try Self.property(try Self.schema("LexiconInfo"), "name")["pattern"] as? String)
        let expression = try Regex(pattern)
        for name in ["family", "a", String(repeating: "x", count: 64), "A-b_9", "", String(repeating: "x", count: 65), "a b", "é", "a/b"] {
            let matches = (try? expression.wholeMatch(in: name)) != nil
            #expect(matches == LexiconInfo.isValidName(name), "\(name)")
        }
    }

    @Test("transcription forms: the formats, granularities and limits are the code's")
    func transcriptionForms() throws {
        for name in ["TranscriptionForm", "AlignmentForm"] {
            let form = try Self.schema(name)
            let format = try Self.property(form, "response_format")
            #expect(format["enum"] as? [String] == TranscriptionFormat.allCases.map(\.rawValue))
            #expect(format["default"] as? String == (name == "AlignmentForm" ? "verbose_json" : "json"))
            let granularities = try Self.property(form, "timestamp_granularities[]")["items"] as? [String: Any]
            #expect(granularities?["enum"] as? [String] == TranscriptionRequest.Granularity.allCases.map(\.rawValue))
            #expect(try Self.property(form, "prompt")["maxLength"] as? Int == TranscriptionRequest.maxPromptCharacters)
            #expect(try Self.property(form, "model")["maxLength"] as? Int == TranscriptionRequest.maxModelCharacters)
        }
        #expect(try Self.property(try Self.schema("AlignmentForm"), "text")["maxLength"] as? Int == TranscriptionRequest.maxTextCharacters)
        let models = try Self.property(try Self.schema("TranscriptionForm"), "model")["description"] as? String ?? ""
        #expect(ServiceConfiguration.defaultTranscriptionModels.keys.allSatisfy { models.contains("`\($0)`") }, "\(models)")
    }

    @Test("error codes: the document's ErrorCode, docs/service.md's table and the code's ErrorCode are one list")
    func errorCodes() throws {
        let codes = Set(ErrorCode.allCases.map(\.rawValue))
        let schema = try #require(try Self.schema("ErrorCode")["anyOf"] as? [[String: Any]])
        #expect(Set(schema.first?["enum"] as? [String] ?? []) == codes)
        #expect(schema.last?["pattern"] as? String == "^http_[0-9]{3}$")
        // The table under "## Errors": each row's second column, its codes in backticks.
        let page = try String(contentsOf: Repository.file("docs/service.md"), encoding: .utf8)
        let section = try #require(page.components(separatedBy: "\n## Errors\n").last?.components(separatedBy: "\n## ").first)
        var documented = Set<String>()
        for row in section.split(separator: "\n") where row.hasPrefix("| ") {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count > 2 else { continue }
            for code in cells[2].split(separator: "`").enumerated() where code.offset % 2 == 1 { documented.insert(String(code.element)) }
        }
        #expect(
            documented == codes.union(["http_<status>"]),
            "documented, not a code: \(documented.subtracting(codes).sorted()); a code not documented: \(codes.subtracting(documented).sorted())")
    }

    @Test("OpenAI's speech route: the speed's range is the provider's")
    func speechSpeed() throws {
        let speed = try Self.property(try Self.schema("OpenAISpeechRequest"), "speed")
        #expect(speed["minimum"] as? Double == OpenAIProvider.speeds.lowerBound && speed["maximum"] as? Double == OpenAIProvider.speeds.upperBound)
    }
}

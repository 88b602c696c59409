public import Foundation

/// One message of a conversation: who speaks, and a recorded clip and/or the words.
public struct ConversationMessage: Sendable, Equatable {
    /// The speaker's name, as shown in the timeline and captions.
    public var speaker: String
    /// Path of a recorded clip, relative to the conversation file (or absolute).
    public var audio: String?
    /// The words; shown in the timeline and captions, and synthesized when there is no `audio`.
    public var text: String?
    /// A voice id (`provider:voice`) for this message, overriding the conversation's `voices` map.
    public var voice: String?

    public init(speaker: String, audio: String? = nil, text: String? = nil, voice: String? = nil) {
        self.speaker = speaker
        self.audio = audio
        self.text = text
        self.voice = voice
    }
}

/// An ordered list of messages to render into one file, as read from a conversation JSON file.
///
/// ```json
/// { "gap_ms": 300,
///   "messages": [ { "speaker": "Sarah", "audio": "clips/sarah-1.mp3", "text": "Practice moved to 4:30." } ] }
/// ```
///
/// ```swift
/// let conversation = try Conversation.load(from: URL(fileURLWithPath: "samples/conversation.json"))
/// ```
public struct Conversation: Sendable {
    /// Silence between messages in milliseconds, when the file sets it.
    public var gapMilliseconds: Int?
    public var messages: [ConversationMessage]
    /// Speaker name → voice id (`provider:voice`).
    public var voices: [String: String]
    /// Provider id → settings object passed to that provider.
    public var voiceSettings: [String: JSONValue]
    /// Folder that relative clip paths are resolved against.
    public var baseDirectory: URL
    /// Where the conversation came from, for error messages.
    public var name: String

    public init(messages: [ConversationMessage], gapMilliseconds: Int? = nil, voices: [String: String] = [:],
                voiceSettings: [String: JSONValue] = [:], baseDirectory: URL, name: String = "conversation") {
        self.messages = messages
        self.gapMilliseconds = gapMilliseconds
        self.voices = voices
        self.voiceSettings = voiceSettings
        self.baseDirectory = baseDirectory
        self.name = name
    }

    /// The absolute location of message `index`'s clip, if it has one.
    public func audioURL(of index: Int) -> URL? {
        guard let audio = messages[index].audio else { return nil }
        if audio.hasPrefix("/") { return URL(fileURLWithPath: audio) }
        return baseDirectory.appendingPathComponent(audio).standardizedFileURL
    }

    /// Reads and validates a conversation file.
    /// - Throws: `AudioError` (`fileNotFound`, `invalidConversation`) naming the file and, for a bad message,
    ///   its index and field (`messages[2].speaker: missing required field`).
    public static func load(from url: URL) throws -> Conversation {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            let exists = FileManager.default.fileExists(atPath: url.path)
            throw AudioError(exists ? .unreadable : .fileNotFound, subject: url.path, reason: exists ? "cannot read" : "no such file")
        }
        return try parse(data, baseDirectory: url.deletingLastPathComponent(), name: url.path)
    }

    /// Parses conversation JSON held in memory.
    public static func parse(_ data: Data, baseDirectory: URL, name: String) throws -> Conversation {
        let raw: RawConversation
        do {
            raw = try JSONDecoder().decode(RawConversation.self, from: data)
        } catch let error as DecodingError {
            throw AudioError(.invalidConversation, subject: name, reason: Self.describe(error))
        }
        func invalid(_ reason: String) -> AudioError { AudioError(.invalidConversation, subject: name, reason: reason) }
        if let gap = raw.gap_ms, !(0...60_000).contains(gap) {
            throw invalid("gap_ms: \(gap) is out of range (0 to 60000 milliseconds)")
        }
        guard !raw.messages.isEmpty else { throw invalid("has no messages (\"messages\" is empty)") }
        for (index, message) in raw.messages.enumerated() {
            if message.speaker.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw invalid("messages[\(index)].speaker: must not be empty")
            }
            if let audio = message.audio, audio.trimmingCharacters(in: .whitespaces).isEmpty {
                throw invalid("messages[\(index)].audio: must not be empty")
            }
            let hasText = !(message.text ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            if message.audio == nil && !hasText {
                throw invalid("messages[\(index)]: needs \"audio\" (a clip) or \"text\" (words to synthesize)")
            }
            if let voice = message.voice, !voice.contains(":") {
                throw invalid("messages[\(index)].voice: \"\(voice)\" is not a voice id of the form provider:voice")
            }
        }
        for (speaker, voice) in raw.voices ?? [:] where !voice.contains(":") {
            throw invalid("voices[\(JSONValue.quote(speaker))]: \"\(voice)\" is not a voice id of the form provider:voice")
        }
        return Conversation(
            messages: raw.messages.map { ConversationMessage(speaker: $0.speaker, audio: $0.audio, text: $0.text, voice: $0.voice) },
            gapMilliseconds: raw.gap_ms, voices: raw.voices ?? [:], voiceSettings: raw.voice_settings ?? [:],
            baseDirectory: baseDirectory, name: name)
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let index = key.intValue { text += "[\(index)]" } else { text += text.isEmpty ? key.stringValue : ".\(key.stringValue)" }
            }
            return text
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context.codingPath)
            return parent.isEmpty ? "missing required field \"\(key.stringValue)\""
                : "\(parent): missing required field \"\(key.stringValue)\""
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): must be \(Self.name(of: type))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): must be \(Self.name(of: type)), not null"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let detail = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
                return "not valid JSON" + (detail.map { " (\($0))" } ?? "")
            }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "not a valid conversation"
        }
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is [RawMessage].Type, is Array<Any>.Type: return "an array"
        default:
            let described = String(describing: type)
            if described.hasPrefix("Array") { return "an array" }
            if described.hasPrefix("Dictionary") || described.hasPrefix("Raw") { return "an object" }
            return "a \(described)"
        }
    }
}

private struct RawConversation: Decodable {
    var gap_ms: Int?
    var messages: [RawMessage]
    var voices: [String: String]?
    var voice_settings: [String: JSONValue]?
}

private struct RawMessage: Decodable {
    var speaker: String
    var audio: String?
    var text: String?
    var voice: String?
}

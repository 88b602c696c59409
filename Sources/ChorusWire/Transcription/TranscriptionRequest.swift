public import Foundation

/// A `POST /v1/audio/transcriptions` or `/v1/audio/alignments` request: multipart/form-data as OpenAI's SDKs send
/// it (`file`, `model`, `language`, `prompt`, `response_format`, `temperature`, `timestamp_granularities[]`), or an
/// uploaded clip's id in `clip` instead of `file`; an alignment adds the `text` spoken in the audio. The one reading
/// of those fields: the service decodes with it, `ChorusClient` writes what it reads.
public struct TranscriptionRequest: Sendable, Equatable {
    /// Where the audio is.
    public enum Audio: Sendable, Equatable {
        /// The bytes of an uploaded file (the part `file`).
        case file(Data, filename: String?)
        /// A clip uploaded earlier (`POST /v1/clips`), by id.
        case clip(String)
    }

    /// The times a verbose answer carries (`timestamp_granularities[]`).
    public enum Granularity: String, Sendable, CaseIterable, Codable {
        case word, segment
    }

    public var audio: Audio
    /// The model name the client asked for (`whisper-1`, or a model the service names in `/health`).
    public var model: String
    /// ISO-639-1 code of the spoken language (`en`), if the client knows it.
    public var language: String?
    /// Text that came before this audio (names, spellings). Offline Whisper does not take one; it is kept for the
    /// providers that do.
    public var prompt: String?
    public var format: TranscriptionFormat
    /// What `verbose_json` carries: segments unless the client asks otherwise (as OpenAI does).
    public var granularities: Set<Granularity>
    public var temperature: Double?
    /// The text spoken in the audio, for an alignment.
    public var text: String?

    public init(
        audio: Audio, model: String = "whisper-1", language: String? = nil, prompt: String? = nil, format: TranscriptionFormat = .json,
        granularities: Set<Granularity> = [.segment], temperature: Double? = nil, text: String? = nil
    ) {
        self.audio = audio
        self.model = model
        self.language = language
        self.prompt = prompt
        self.format = format
        self.granularities = granularities
        self.temperature = temperature
        self.text = text
    }

    /// Longest `prompt`, characters (OpenAI reads 224 tokens of it).
    public static let maxPromptCharacters = 2_000
    /// Longest `text` of an alignment, characters.
    public static let maxTextCharacters = 100_000
    /// Longest `model` name, characters.
    /// Whether `text` has the shape of a language code a transcription takes: two or three ASCII letters (ISO 639-1
    /// `en`, or 639-3 `eng`). The one rule of the service's form and `chorus transcribe --language`; whether the model
    /// transcribes that language is the recognizer's to say (`WhisperRecognizer.languageCode`).
    public static func isLanguageCode(_ text: String) -> Bool {
        (2...3).contains(text.count) && text.allSatisfy { $0.isASCII && $0.isLetter }
    }

    public static let maxModelCharacters = 100

    /// Reads a form. `alignment` asks for `text` too.
    /// - Throws: `RequestBodyError` naming the field (`file`, `model`, `response_format`, …).
    package init(form: MultipartForm, alignment: Bool = false) throws {
        func text(_ name: String) throws -> String? {
            do {
                return try form.text(name)?.trimmingCharacters(in: .whitespacesAndNewlines)
            } catch let error as MultipartError {
                throw RequestBodyError(.invalid, error.reason, field: name)
            }
        }
        func invalid(_ message: String, _ field: String) -> RequestBodyError { RequestBodyError(.invalid, message, field: field) }

        let file = form.part("file")
        let clip = try text("clip")
        switch (file, clip) {
        case (let file?, nil):
            let data = form.data(of: file)
            guard !data.isEmpty else { throw invalid("file: the part is empty; send the audio bytes", "file") }
            audio = .file(data, filename: file.filename)
        case (nil, let clip?):
            guard !clip.isEmpty, clip.count <= 200 else { throw invalid("clip: give the id of an uploaded clip", "clip") }
            audio = .clip(clip)
        case (nil, nil):
            throw invalid("file: no audio; send it in the part \"file\" (or an uploaded clip's id in \"clip\")", "file")
        case (.some, .some):
            throw invalid("clip: send the audio in \"file\" or name a clip in \"clip\", not both", "clip")
        }

        let model = try text("model") ?? ""
        guard !model.isEmpty else { throw invalid("model: required (whisper-1 uses the service's default)", "model") }
        guard model.count <= Self.maxModelCharacters else { throw invalid("model: longer than \(Self.maxModelCharacters) characters", "model") }
        self.model = model

        if let language = try text("language"), !language.isEmpty {
            guard Self.isLanguageCode(language) else {
                throw invalid("language: \"\(language.prefix(20))\" is not an ISO-639-1 code such as en", "language")
            }
            self.language = language.lowercased()
        }

        if let prompt = try text("prompt"), !prompt.isEmpty {
            guard prompt.count <= Self.maxPromptCharacters else {
                throw invalid("prompt: longer than \(Self.maxPromptCharacters) characters", "prompt")
            }
            self.prompt = prompt
        }

        let formatName = try text("response_format") ?? ""
        if formatName.isEmpty {
            format = alignment ? .verboseJSON : .json
        } else if let format = TranscriptionFormat(rawValue: formatName.lowercased()) {
            self.format = format
        } else {
            throw invalid(
                "response_format: \"\(formatName.prefix(40))\" is not one of \(TranscriptionFormat.allCases.map(\.rawValue).joined(separator: ", "))",
                "response_format")
        }

        var granularities: Set<Granularity> = []
        let named = try form.parts.filter { $0.name == "timestamp_granularities[]" || $0.name == "timestamp_granularities" }.map { part in
            guard let value = String(data: form.data(of: part), encoding: .utf8) else {
                throw invalid("timestamp_granularities[]: not UTF-8 text", "timestamp_granularities[]")
            }
            return value.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        for value in named {
            guard let granularity = Granularity(rawValue: value.lowercased()) else {
                throw invalid("timestamp_granularities[]: \"\(value.prefix(20))\" is not word or segment", "timestamp_granularities[]")
            }
            granularities.insert(granularity)
        }
        if !granularities.isEmpty && format != .verboseJSON {
            throw invalid("timestamp_granularities[]: only with response_format verbose_json", "timestamp_granularities[]")
        }
        // An alignment's purpose is its words: they come unless the client chose.
        self.granularities = granularities.isEmpty ? (alignment ? [.word, .segment] : [.segment]) : granularities

        if let value = try text("temperature"), !value.isEmpty {
            guard let temperature = Double(value), (0...1).contains(temperature) else {
                throw invalid("temperature: \"\(value.prefix(20))\" is not a number from 0 to 1", "temperature")
            }
            self.temperature = temperature
        }

        if alignment {
            guard let spoken = try text("text"), !spoken.isEmpty else { throw invalid("text: required; the words spoken in the audio", "text") }
            guard spoken.count <= Self.maxTextCharacters else { throw invalid("text: longer than \(Self.maxTextCharacters) characters", "text") }
            self.text = spoken
        }
    }

    /// The request as a multipart body (what `ChorusClient` sends), and its content type.
    public func form(boundary: String = "chorus-" + UUID().uuidString) -> (body: Data, contentType: String) {
        var writer = MultipartForm.Writer(boundary: boundary)
        switch audio {
        case .file(let data, let filename): writer.add("file", data: data, filename: filename, contentType: "application/octet-stream")
        case .clip(let id): writer.add("clip", id)
        }
        writer.add("model", model)
        if let language { writer.add("language", language) }
        if let prompt { writer.add("prompt", prompt) }
        writer.add("response_format", format.rawValue)
        if format == .verboseJSON {
            for granularity in Granularity.allCases where granularities.contains(granularity) {
                writer.add("timestamp_granularities[]", granularity.rawValue)
            }
        }
        if let temperature { writer.add("temperature", String(temperature)) }
        if let text { writer.add("text", text) }
        return (writer.finished(), writer.contentType)
    }
}

extension MultipartForm {
    /// Writes a multipart/form-data body, field by field.
    public struct Writer: Sendable {
        public let boundary: String
        private var body = Data()

        public init(boundary: String) { self.boundary = boundary }

        /// `multipart/form-data; boundary=…`.
        public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

        /// A text field.
        public mutating func add(_ name: String, _ value: String) {
            add(name, data: Data(value.utf8), filename: nil, contentType: nil)
        }

        /// A field with `data`, as a file when `filename` is given.
        public mutating func add(_ name: String, data: Data, filename: String?, contentType: String?) {
            func quoted(_ text: String) -> String {
                "\""
                    + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    .replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\n", with: "") + "\""
            }
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\(quoted(name))"
            if let filename { head += "; filename=\(quoted(filename))" }
            head += "\r\n"
            if let contentType { head += "Content-Type: \(contentType)\r\n" }
            body.append(Data((head + "\r\n").utf8))
            body.append(data)
            body.append(Data("\r\n".utf8))
        }

        /// The body, closed.
        public func finished() -> Data { body + Data("--\(boundary)--\r\n".utf8) }
    }
}

public import ChorusWire
public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A client for the Chorus service, for apps (iOS 16+, macOS) and servers (Linux): typed requests and
/// responses (the same `ChorusWire` types the service uses), errors from the service's error body, and
/// render progress as an `AsyncThrowingStream` from its server-sent events. Foundation only.
///
/// ```swift
/// let chorus = ChorusClient(baseURL: URL(string: "https://chorus.example.com")!, apiKey: key)
/// let clip = try await chorus.uploadClip(voiceNote)
/// let manifest = try await chorus.render(RenderRequest(messages: [.init(speaker: "Mom", clip: clip.id),
///                                                                 .init(speaker: "Kid", text: "On my way!")]))
/// ```
public final class ChorusClient: Sendable {
    public let baseURL: URL
    private let apiKey: String?
    private let session: URLSession
    private let timeout: TimeInterval

    /// A client of the service at `baseURL`.
    /// - Parameters:
    ///   - baseURL: the service's address (`https://host` or `http://127.0.0.1:8080`).
    ///   - apiKey: sent as `Authorization: Bearer …`; `nil` for a service without keys.
    ///   - session: the URL session requests go through.
    ///   - timeout: seconds a request may take (`defaultTimeout`). A render, speech, transcription or alignment
    ///     answers only when its work is done, which on a busy or small server can take well over the URL session's
    ///     own 60 s; `events(_:)` is open for up to an hour. Zero, negative or not finite: `defaultTimeout`.
    public init(baseURL: URL, apiKey: String?, session: URLSession = .shared, timeout: TimeInterval = defaultTimeout) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.session = session
        self.timeout = timeout.isFinite && timeout > 0 ? timeout : Self.defaultTimeout
    }

    /// Seconds a request may take unless the client is told otherwise: 600, as OpenAI's SDKs wait.
    public static let defaultTimeout: TimeInterval = 600

    // MARK: Voices and clips

    /// Every voice the service offers.
    public func voices() async throws -> [VoiceList.Voice] {
        try await get(ServicePaths.voices, as: VoiceList.self).voices
    }

    /// Uploads a recording (any format the service decodes); the same bytes give the same id.
    public func uploadClip(_ audio: Data) async throws -> ClipInfo {
        try await send("POST", ServicePaths.clips, body: audio, contentType: "application/octet-stream", as: ClipInfo.self)
    }

    /// Clones a voice from uploaded clips (ElevenLabs); the result's `id` works as a message's `voice`.
    public func clone(name: String, clips: [String], description: String? = nil) async throws -> VoiceCloneResponse {
        try await send(
            "POST", ServicePaths.voiceClone, json: VoiceCloneRequest(name: name, clips: clips, description: description),
            as: VoiceCloneResponse.self)
    }

    // MARK: Transcription

    /// Transcribes recorded speech (any format the service decodes) with the service's offline Whisper: the text, the
    /// language, the duration, each word's times and the segments (OpenAI's `verbose_json`).
    public func transcribe(_ audio: Data, language: String? = nil) async throws -> Transcription {
        try await transcription(
            ServicePaths.transcriptions,
            TranscriptionRequest(
                audio: .file(audio, filename: "audio"), language: language,
                format: .verboseJSON, granularities: [.word, .segment]))
    }

    /// Transcribes a clip uploaded earlier (`uploadClip`), by its id.
    public func transcribe(clip id: String, language: String? = nil) async throws -> Transcription {
        try await transcription(
            ServicePaths.transcriptions,
            TranscriptionRequest(
                audio: .clip(id), language: language, format: .verboseJSON,
                granularities: [.word, .segment]))
    }

    /// Times every word of `text`, the words spoken in `audio` (a verse, a paragraph, an edited voice note): each word
    /// exactly once, in order, spelled as written, and the sentences.
    public func align(_ audio: Data, text: String) async throws -> Transcription {
        try await transcription(
            ServicePaths.alignments,
            TranscriptionRequest(
                audio: .file(audio, filename: "audio"), format: .verboseJSON,
                granularities: [.word, .segment], text: text))
    }

    private func transcription(_ path: String, _ request: TranscriptionRequest) async throws -> Transcription {
        let (body, contentType) = request.form()
        return try await send("POST", path, body: body, contentType: contentType, as: Transcription.self)
    }

    // MARK: Renders

    /// Renders and waits for the result (or gets the existing one: renders are content-addressed).
    public func render(_ request: RenderRequest) async throws -> RenderManifest {
        try await send("POST", ServicePaths.renders, json: request, as: RenderManifest.self)
    }

    /// What a render of `request` would be, without rendering it: its id, whether it exists, and each speaker's and
    /// message's voice (named, or given by the service's defaults). Refused as the render would be.
    public func plan(_ request: RenderRequest) async throws -> RenderPlanResponse {
        try await send("POST", ServicePaths.renderPlan, json: request, as: RenderPlanResponse.self)
    }

    /// Starts a render and returns at once (`queued` or `running`, or `done` if it existed); follow it with `events(_:)`.
    public func startRender(_ request: RenderRequest) async throws -> RenderManifest {
        try await send("POST", ServicePaths.renders, json: request, headers: ["Prefer": "respond-async"], as: RenderManifest.self)
    }

    /// One message spoken as a render, with a stored lexicon's pronunciations if `lexicon` names one.
    public func speech(_ text: String, voice: String, format: String? = nil, lexicon: String? = nil) async throws -> RenderManifest {
        try await send(
            "POST", ServicePaths.speech, json: SpeechRequest(text: text, voice: voice, format: format, lexicon: lexicon.map(JSONValue.string)),
            as: RenderManifest.self)
    }

    // MARK: Lexicons

    /// Stores (or replaces) a pronunciation lexicon for this key: each word's alias (`.string("win")`) or
    /// `.object(["ipa": "ʃɪˈvɔːn", "alias": …, "case_sensitive": …])`. Renders then use it by name (`lexicon: "family"`).
    @discardableResult
    public func putLexicon(_ name: String, entries: [String: JSONValue]) async throws -> LexiconInfo {
        try await send("PUT", ServicePaths.lexicon(Self.segment(name)), json: LexiconUpload(entries: entries), as: LexiconInfo.self)
    }

    /// One stored lexicon with its entries.
    public func lexicon(_ name: String) async throws -> LexiconInfo { try await get(ServicePaths.lexicon(Self.segment(name)), as: LexiconInfo.self) }

    /// This key's stored lexicons (without their entries).
    public func lexicons() async throws -> [LexiconInfo] { try await get(ServicePaths.lexicons, as: LexiconList.self).lexicons }

    /// Deletes a stored lexicon (renders already accepted keep what it said).
    public func deleteLexicon(_ name: String) async throws {
        _ = try await perform(request("DELETE", ServicePaths.lexicon(Self.segment(name))))
    }

    /// `name` as one path segment (a name the service refuses reaches it as such, never as another path).
    static func segment(_ name: String) -> String {
        name.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")) ?? "-"
    }

    /// A render's manifest.
    public func manifest(_ id: String) async throws -> RenderManifest { try await get(ServicePaths.render(id), as: RenderManifest.self) }

    /// A finished render's timeline.
    public func timeline(_ id: String) async throws -> Timeline { try await get(ServicePaths.render(id, .timeline), as: Timeline.self) }

    /// A finished render's waveform peaks (audiowaveform's JSON), e.g. 100 points per second at 8 bits for peaks.js.
    public func waveform(_ id: String, pixelsPerSecond: Int, bits: Int = 8) async throws -> WaveformData {
        try await get(ServicePaths.render(id, .waveform) + "?pixels_per_second=\(pixelsPerSecond)&bits=\(bits)", as: WaveformData.self)
    }

    /// Deletes a render and its files.
    public func delete(_ id: String) async throws {
        _ = try await perform(request("DELETE", ServicePaths.render(id)))
    }

    /// The render's audio address, for `AVPlayer` (with `AVURLAssetHTTPHeaderFieldsKey` carrying `authorizationHeader`)
    /// or any client that can send the header; ranges and ETags are served.
    public func audioURL(_ id: String) -> URL { url(ServicePaths.render(id, .audio)) }

    /// `["Authorization": "Bearer …"]`, for players that take headers.
    public var authorizationHeader: [String: String] { apiKey.map { ["Authorization": "Bearer \($0)"] } ?? [:] }

    // MARK: Plumbing

    func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + path)!
    }

    func request(_ method: String, _ path: String, body: Data? = nil, contentType: String? = nil, headers: [String: String] = [:]) -> URLRequest {
        var request = URLRequest(url: url(path))
        request.timeoutInterval = timeout  // set, not given to init: swift-corelibs-foundation honours only a set one
        request.httpMethod = method
        request.httpBody = body
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        for (name, value) in authorizationHeader.merging(headers, uniquingKeysWith: { $1 }) { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    private func get<T: Decodable>(_ path: String, as type: T.Type) async throws -> T {
        try decode(type, from: try await perform(request("GET", path)))
    }

    private func send<T: Decodable>(_ method: String, _ path: String, json: some Encodable, headers: [String: String] = [:], as type: T.Type)
        async throws -> T
    {
        try await send(method, path, body: JSONEncoder().encode(json), contentType: "application/json", headers: headers, as: type)
    }

    private func send<T: Decodable>(
        _ method: String, _ path: String, body: Data, contentType: String, headers: [String: String] = [:],
        as type: T.Type
    ) async throws -> T {
        try decode(type, from: try await perform(request(method, path, body: body, contentType: contentType, headers: headers)))
    }

    private func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw ChorusClientError(status: 0, code: "invalid_response", message: "the service's answer is not a \(type): \(error)")
        }
    }

    /// Sends `request`; a status of 400 or more becomes a `ChorusClientError` from the service's error body.
    func perform(_ request: URLRequest) async throws -> Data {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else {
            throw ChorusClientError(status: 0, code: "invalid_response", message: "not an HTTP response")
        }
        guard http.statusCode < 400 else { throw ChorusClientError(response: http, body: data) }
        return data
    }
}

public import Foundation

/// A voice made by ElevenLabs' instant voice cloning.
public struct ClonedVoice: Sendable, Equatable {
    public var voiceID: String
    public var requiresVerification: Bool
}

/// A recording to clone a voice from.
public struct VoiceSample: Sendable {
    public var fileName: String
    public var data: Data

    public init(fileName: String, data: Data) {
        self.fileName = fileName
        self.data = data
    }
}

extension ElevenLabsProvider {
    /// True when an API key is configured.
    public var isConfigured: Bool { apiKey != nil }

    /// `POST /v1/voices/add` (multipart: `name`, `files`, `description`, `remove_background_noise`, `labels`).
    /// - Throws: `VoiceError` (authentication, quota, bad request, …); never mentions the key.
    public func addVoice(name: String, samples: [VoiceSample], description: String?, removeBackgroundNoise: Bool,
                         labels: [String: String] = [:]) async throws -> ClonedVoice {
        let key = try requireKey()
        var form = MultipartForm()
        form.add(name: "name", value: name)
        if let description { form.add(name: "description", value: description) }
        form.add(name: "remove_background_noise", value: removeBackgroundNoise ? "true" : "false")
        if !labels.isEmpty, let json = try? JSONSerialization.data(withJSONObject: labels, options: [.sortedKeys]) {
            form.add(name: "labels", value: String(decoding: json, as: UTF8.self))
        }
        for sample in samples { form.add(name: "files", fileName: sample.fileName, data: sample.data) }
        let response = try await http.send(.POST, ProviderHTTP.join(baseURL, "/v1/voices/add"), headers: [("xi-api-key", key)],
                                           body: form.finished, contentType: form.contentType)
        guard response.status == 200 || response.status == 201 else { throw error(for: response) }
        guard let object = ProviderHTTP.jsonObject(response.body), let voiceID = object["voice_id"] as? String, !voiceID.isEmpty else {
            throw VoiceError(.invalidResponse, provider: id, message: "no voice_id in the response")
        }
        return ClonedVoice(voiceID: voiceID, requiresVerification: object["requires_verification"] as? Bool ?? false)
    }

    /// `DELETE /v1/voices/{voice_id}`.
    public func deleteVoice(_ voiceID: String) async throws {
        let key = try requireKey()
        guard !voiceID.isEmpty, voiceID.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
            throw VoiceError(.voiceNotFound, provider: id, message: "\"\(voiceID)\" is not an ElevenLabs voice id")
        }
        let response = try await http.send(.DELETE, ProviderHTTP.join(baseURL, "/v1/voices/\(voiceID)"), headers: [("xi-api-key", key)])
        guard response.status == 200 || response.status == 204 else { throw error(for: response) }
    }
}

/// A `multipart/form-data` body.
struct MultipartForm {
    let boundary = "chorus-" + UUID().uuidString
    private(set) var body = Data()

    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    mutating func add(name: String, value: String) {
        body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
    }

    mutating func add(name: String, fileName: String, data: Data) {
        let safeName = fileName.filter { $0 != "\"" && $0 != "\r" && $0 != "\n" }
        body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(safeName)\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8))
        body.append(data)
        body.append(Data("\r\n".utf8))
    }

    /// The body with its closing boundary.
    var finished: Data { body + Data("--\(boundary)--\r\n".utf8) }
}

import ChorusWire
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
    public func addVoice(
        name: String, samples: [VoiceSample], description: String?, removeBackgroundNoise: Bool,
        labels: [String: String] = [:]
    ) async throws -> ClonedVoice {
        let key = try requireKey()
        var form = MultipartForm.Writer(boundary: "chorus-" + UUID().uuidString)
        form.add("name", name)
        if let description { form.add("description", description) }
        form.add("remove_background_noise", removeBackgroundNoise ? "true" : "false")
        if !labels.isEmpty, let json = try? JSONSerialization.data(withJSONObject: labels, options: [.sortedKeys]) {
            form.add("labels", String(decoding: json, as: UTF8.self))
        }
        for sample in samples { form.add("files", data: sample.data, filename: sample.fileName, contentType: "application/octet-stream") }
        let response = try await http.send(
            .POST, ProviderHTTP.join(baseURL, "/v1/voices/add"), headers: [("xi-api-key", key)],
            body: form.finished(), contentType: form.contentType)
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

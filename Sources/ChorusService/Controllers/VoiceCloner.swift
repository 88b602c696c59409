import ChorusConversation
import ChorusSpeech
import ChorusWire
import Foundation
import Hummingbird

/// Instant voice cloning through ElevenLabs from uploaded clips. Everything that can be checked is
/// checked before calling out: the provider is configured (409), 1–25 known clips (422), 10 s to
/// 5 min of audio in all (422).
struct VoiceCloner: Sendable {
    static let maxClips = 25
    static let seconds = 10.0...300.0

    let chorus: Chorus
    let clips: ClipStore

    private func provider() throws -> ElevenLabsProvider {
        guard let provider = chorus.configuration.registry.providers[BuiltInProvider.elevenlabs.rawValue] as? ElevenLabsProvider,
            provider.isConfigured
        else {
            throw ServiceError(
                .conflict, .providerNotConfigured, "voice cloning needs ElevenLabs: set \(ElevenLabsProvider.hosting.keyVariable) for the service")
        }
        return provider
    }

    func clone(_ request: VoiceCloneRequest) async throws -> VoiceCloneResponse {
        let provider = try provider()
        let name = request.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 100 else { throw ServiceError.invalid("name must be 1 to 100 characters", field: "name") }
        guard !request.clips.isEmpty, request.clips.count <= Self.maxClips else {
            throw ServiceError.invalid("clips: give 1 to \(Self.maxClips) clip ids (got \(request.clips.count))", field: "clips")
        }
        var samples: [VoiceSample] = []
        var total = 0.0
        for (index, id) in request.clips.enumerated() {
            guard let clip = try await clips.get(id) else {
                throw ServiceError.invalid("clips[\(index)]: no uploaded clip \(id.prefix(80))", field: "clips[\(index)]", code: .clipNotFound)
            }
            total += clip.info.duration
            samples.append(
                VoiceSample(
                    fileName: "clip-\(index + 1).\(clip.info.container.split(separator: ",").first ?? "audio")",
                    data: try Data(contentsOf: clip.url)))
        }
        guard Self.seconds.contains(total) else {
            throw ServiceError.invalid(
                String(
                    format: "clips: %.1f s of audio in all; cloning needs %.0f s to %.0f s", total, Self.seconds.lowerBound, Self.seconds.upperBound),
                field: "clips", code: .clipLength)
        }
        do {
            let voice = try await provider.addVoice(
                name: name, samples: samples, description: request.description,
                removeBackgroundNoise: request.removeBackgroundNoise ?? false, labels: ["created_by": "chorus"])
            return VoiceCloneResponse(id: "elevenlabs:\(voice.voiceID)", name: name, requiresVerification: voice.requiresVerification)
        } catch let error as VoiceError {
            throw ServiceError.provider(error)
        }
    }

    func delete(_ id: String) async throws {
        guard let voice = VoiceID(id), voice.provider == "elevenlabs" else {
            throw ServiceError.invalid("only cloned ElevenLabs voices (elevenlabs:<voice_id>) can be deleted", field: "id")
        }
        do {
            try await provider().deleteVoice(voice.voice)
        } catch let error as VoiceError {
            throw ServiceError.provider(error, missing: "voice \(id)")
        }
    }
}

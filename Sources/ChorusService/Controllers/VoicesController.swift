import ChorusConversation
import ChorusSpeech
import ChorusWire
import Foundation
import Hummingbird

/// `GET /v1/voices`: every configured provider's voices (a provider that cannot list them — no key,
/// unreachable — is left out), and `POST /v1/voices/clone` / `DELETE /v1/voices/{id}`.
struct VoicesController: Sendable {
    let chorus: Chorus
    let clips: ClipStore

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        table.add(.get, ServicePaths.voices, to: router) { _, _ in try HTTPSupport.json(try await list()) }
        table.add(.post, ServicePaths.voiceClone, to: router) { request, _ in
            let body = try HTTPSupport.decode(VoiceCloneRequest.self, from: try await HTTPSupport.body(of: request, limit: 64 * 1024))
            return try HTTPSupport.json(try await VoiceCloner(chorus: chorus, clips: clips).clone(body), status: .created)
        }
        table.add(.delete, ServicePaths.voice("{id}"), to: router) { _, context in
            try await VoiceCloner(chorus: chorus, clips: clips).delete(context.parameters.get("id") ?? "")
            return Response(status: .noContent)
        }
    }

    private func list() async throws -> VoiceList {
        var voices: [VoiceList.Voice] = []
        let registry = chorus.configuration.registry
        for id in registry.ids {
            if let provider = registry.providers[id] as? ElevenLabsProvider, !provider.isConfigured { continue }
            guard let listed = try? await registry.providers[id]!.voices() else { continue }
            voices += listed.map { info in
                let details = info.details.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                let gender = VoiceSound.of(info.id)?.rawValue ?? details.first { $0 == "male" || $0 == "female" }
                let language = details.first {
                    $0.count >= 2 && $0.count <= 12 && $0.allSatisfy { $0.isLetter || $0 == "-" } && $0 != "male" && $0 != "female"
                }
                return VoiceList.Voice(id: info.id.description, provider: info.id.provider, name: info.name, language: language, gender: gender)
            }
        }
        return VoiceList(voices: voices)
    }
}

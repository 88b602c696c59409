import ChorusConversation
import ChorusSpeech
import ChorusVoiceMaking
import ChorusWire
import Foundation
import Hummingbird

/// `GET /v1/voices`: every configured provider's voices (a provider that cannot list them — no key,
/// unreachable — is left out; voices made for another key too), and `POST /v1/voices/clone` / `DELETE /v1/voices/{id}`
/// (a cloned ElevenLabs voice, or a voice made from recordings: `VoiceWorkshopRoutes`).
struct VoicesController: Sendable {
    let chorus: Chorus
    let clips: ClipStore
    let workshop: VoiceWorkshop

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        table.add(.get, ServicePaths.voices, to: router) { _, context in
            try HTTPSupport.json(try await list(owner: VoiceWorkshopRoutes.owner(context)))
        }
        table.add(.post, ServicePaths.voiceClone, to: router) { request, _ in
            let body = try HTTPSupport.decode(VoiceCloneRequest.self, from: try await HTTPSupport.body(of: request, limit: 64 * 1024))
            return try HTTPSupport.json(try await VoiceCloner(chorus: chorus, clips: clips).clone(body), status: .created)
        }
        table.add(.delete, ServicePaths.voice("{id}"), to: router) { _, context in
            let id = context.parameters.get("id") ?? ""
            if id.hasPrefix("kokoro:") {
                try removeMade(String(id.dropFirst("kokoro:".count)), owner: VoiceWorkshopRoutes.owner(context))
            } else {
                try await VoiceCloner(chorus: chorus, clips: clips).delete(id)
            }
            return Response(status: .noContent)
        }
    }

    /// Stops the making of voice `name` of `owner`, or removes it once made.
    private func removeMade(_ name: String, owner: String) throws {
        guard VoiceWorkshop.owns(name, owner: owner) else { throw ServiceError.notFound("voice kokoro:\(name.prefix(60))") }
        if workshop.cancel(voice: name, owner: owner) { return }
        let folder = KokoroModel.voicesFolder(of: workshop.maker.kokoro)
        guard MadeVoices.record(of: name, in: folder) != nil else {
            throw ServiceError.invalid("only voices made from recordings (and cloned ElevenLabs voices) can be deleted", field: "id")
        }
        try MadeVoices.remove(name: name, in: folder)
    }

    private func list(owner: String) async throws -> VoiceList {
        let made = MadeVoices.records(in: KokoroModel.voicesFolder(of: workshop.maker.kokoro))
        var voices: [VoiceList.Voice] = []
        let registry = chorus.configuration.registry
        for id in registry.ids {
            if let provider = registry.providers[id] as? ElevenLabsProvider, !provider.isConfigured { continue }
            guard let listed = try? await registry.providers[id]!.voices() else { continue }
            voices += listed.filter { $0.id.provider != BuiltInProvider.kokoro.rawValue || VoiceWorkshop.owns($0.id.voice, owner: owner) }.map {
                info in
                let details = info.details.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                let gender = VoiceSound.of(info.id)?.rawValue ?? details.first { $0 == "male" || $0 == "female" }
                let language = details.first {
                    $0.count >= 2 && $0.count <= 12 && $0.allSatisfy { $0.isLetter || $0 == "-" } && $0 != "male" && $0 != "female"
                }
                let record = info.id.provider == BuiltInProvider.kokoro.rawValue ? made[info.id.voice] : nil
                return VoiceList.Voice(
                    id: info.id.description, provider: info.id.provider, name: info.name, language: language, gender: gender ?? record?.sounds,
                    category: record.map { $0.people > 1 ? "generated" : "cloned" } ?? "premade",
                    made: record?.info)
            }
        }
        return VoiceList(voices: voices)
    }
}

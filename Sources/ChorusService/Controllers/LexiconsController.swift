import ChorusConversation
import ChorusText
import ChorusWire
import Foundation
import Hummingbird

/// `/v1/lexicons`: pronunciation lexicons stored per API key (`LexiconStore`): `PUT` stores or replaces one (201 new,
/// 200 replaced), `GET` lists them or returns one with its entries, `DELETE` removes one. A render, `/v1/speech` and
/// `/v1/audio/speech` use one by name (`"lexicon": "family"`).
struct LexiconsController: Sendable {
    let configuration: ServiceConfiguration
    let lexicons: LexiconStore

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        table.add(.get, ServicePaths.lexicons, to: router) { _, context in
            let stored = try await lexicons.list(caller: caller(context))
            return try HTTPSupport.json(LexiconList(lexicons: stored.map { $0.info(withEntries: false) }))
        }
        table.add(.put, ServicePaths.lexicon("{name}"), to: router) { request, context in
            let name = try LexiconStore.checkedName(context.parameters.get("name") ?? "")
            let data = try await HTTPSupport.body(of: request, limit: min(configuration.maxBodyBytes, LexiconStore.maximumBytes))
            let upload = try HTTPSupport.decode(LexiconUpload.self, from: data)
            guard upload.entries.count <= Lexicon.maximumEntries else {
                throw ServiceError.tooLarge("\(upload.entries.count) entries; a lexicon has at most \(Lexicon.maximumEntries)", field: "entries")
            }
            let lexicon = try ServiceError.fields { try Lexicon(json: upload.entries, field: "entries") }
            let (stored, created) = try await lexicons.put(lexicon, name: name, caller: caller(context))
            return try HTTPSupport.json(
                stored.info(withEntries: true), status: created ? .created : .ok,
                headers: [.contentLocation: ServicePaths.lexicon(name)])
        }
        table.add(.get, ServicePaths.lexicon("{name}"), to: router) { _, context in
            let name = try LexiconStore.checkedName(context.parameters.get("name") ?? "")
            guard let stored = try await lexicons.get(name, caller: caller(context)) else { throw ServiceError.notFound("lexicon \(name)") }
            return try HTTPSupport.json(stored.info(withEntries: true))
        }
        table.add(.delete, ServicePaths.lexicon("{name}"), to: router) { _, context in
            let name = try LexiconStore.checkedName(context.parameters.get("name") ?? "")
            guard try await lexicons.delete(name, caller: caller(context)) else { throw ServiceError.notFound("lexicon \(name)") }
            return Response(status: .noContent)
        }
    }

    private func caller(_ context: ChorusRequestContext) -> String { context.caller?.id ?? "anonymous" }
}

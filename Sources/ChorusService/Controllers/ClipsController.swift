import ChorusWire
import Hummingbird

/// `POST /v1/clips`: raw audio bytes in any supported format → 201 (new) or 200 (the same bytes again).
struct ClipsController: Sendable {
    let clips: ClipStore
    let configuration: ServiceConfiguration

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        table.add(.post, ServicePaths.clips, to: router) { request, _ in
            let data = try await HTTPSupport.body(of: request, limit: configuration.maxBodyBytes)
            guard !data.isEmpty else { throw ServiceError.badRequest("the body is empty; send the audio bytes", field: "body") }
            let (info, created) = try await clips.add(data)
            return try HTTPSupport.json(info, status: created ? .created : .ok)
        }
    }
}

import ChorusAudio
import ChorusPictures
import ChorusSupport
import ChorusWire
import Foundation
import Hummingbird

/// `GET /v1/renders/{id}/waveform.png|.svg?width=&height=&theme=`: the render drawn with its speakers.
struct PictureResponder: Sendable {
    let catalog: RenderCatalog
    let data: DataDirectory
    let pool: WorkerPool
    /// How long a render is kept: how long a client may cache its pictures.
    let retentionSeconds: Double

    func respond(to request: Request, stored: StoredRender, svg: Bool) async throws -> Response {
        var options = WaveformPicture.Options()
        options.width = try HTTPSupport.integer(request, "width") ?? options.width
        options.height = try HTTPSupport.integer(request, "height") ?? options.height
        if let name = HTTPSupport.query(request, "theme") {
            guard let theme = PictureTheme.named(name) else { throw ServiceError.badRequest("theme: use light or dark", field: "theme") }
            options.theme = theme
        }
        do {
            try options.validate()
        } catch let error as AudioError {
            throw ServiceError.badRequest("\(error.subject)\(error.value.map { " \($0)" } ?? ""): \(error.reason)", field: error.subject)
        }
        let audio = try await catalog.localAudio(stored)
        let timelineURL = data.render(stored.manifest.id).url(.timeline)
        let chosen = options
        let data = try await pool.run {
            let timeline = try JSONDecoder().decode(Timeline.self, from: Data(contentsOf: timelineURL))
            let picture = try WaveformPicture.make(audio: audio, timeline: timeline, options: chosen)
            return svg ? Data(picture.svg().utf8) : try picture.png()
        }
        return HTTPSupport.bytes(
            data, contentType: svg ? "image/svg+xml" : "image/png",
            headers: [.cacheControl: "public, max-age=\(Int(retentionSeconds)), immutable"])
    }
}

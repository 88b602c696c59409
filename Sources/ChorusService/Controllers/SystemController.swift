import ChorusSupport
import ChorusWire
import Foundation
import Hummingbird

/// The open routes: `/health`, `/metrics` (Prometheus text), `/openapi.json`.
struct SystemController: Sendable {
    let metrics: ServiceMetrics
    let recognition: SpeechRecognition
    let transcriptionRoutes: TranscriptionRoutes

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        table.add(.get, "/health", to: router) { _, _ in
            return try HTTPSupport.json(
                HealthResponse(
                    status: "ok", version: ChorusVersion.current, transcription: recognition.health,
                    transcriptionModels: transcriptionRoutes.health(recognition: recognition)))
        }
        table.add(.get, "/metrics", to: router) { _, _ in
            HTTPSupport.bytes(Data(metrics.text().utf8), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        table.add(.get, "/openapi.json", to: router) { _, _ in
            HTTPSupport.bytes(try OpenAPIDocument.data(), contentType: "application/json")
        }
    }
}

/// The OpenAPI 3.1 description of every route, shipped as a resource and served as it is.
enum OpenAPIDocument {
    static func data() throws -> Data {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json") else {
            throw ServiceError(.internalServerError, .internal, "the OpenAPI document is missing from this build")
        }
        return try Data(contentsOf: url)
    }
}

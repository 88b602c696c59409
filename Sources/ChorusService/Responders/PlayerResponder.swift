import ChorusAudio
import ChorusPictures
import ChorusWire
import Foundation
import Hummingbird

/// `GET /v1/renders/{id}/player`: with the key (`Authorization` or, once, `?key=`) → `303` to the same path
/// with `?exp=…&sig=…`; with a valid signature → the player page, whose audio, peaks and timeline URLs
/// carry their own signatures, so the key is in neither the page, the address bar nor later requests.
struct PlayerResponder: Sendable {
    let signer: URLSigner

    func respond(to request: Request, context: ChorusRequestContext, stored: StoredRender) throws -> Response {
        let path = request.uri.path
        let query = request.uri.queryParameters
        if let expires = query["exp"], Int64(String(expires)) == nil {
            throw ServiceError.badRequest("exp: \"\(expires.prefix(20))\" is not a time in Unix seconds", field: "exp")
        }
        if let signature = query["sig"], signature.count != 64 || !signature.allSatisfy(\.isHexDigit) {
            throw ServiceError.badRequest("sig: not a signature (64 hexadecimal digits)", field: "sig")
        }
        guard query["sig"] != nil,
            signer.verify(path: path, expires: query["exp"].map(String.init), signature: query["sig"].map(String.init))
        else {
            var headers = HTTPFields()
            headers[.location] = signer.sign(path)
            headers[.cacheControl] = "no-store"
            headers[.init("Referrer-Policy")!] = "no-referrer"
            return Response(status: .seeOther, headers: headers)
        }
        let id = stored.manifest.id
        // A zoom derived from the stored peaks (a multiple of their base), near what the page wants.
        let rate = stored.manifest.sampleRate ?? 44_100
        let stride = RenderExecutor.waveformBase
        let wanted = rate / PlayerPage.peaksPerSecond(duration: stored.manifest.duration ?? 0)
        let samplesPerPixel = max(stride, (wanted + stride - 1) / stride * stride)
        let html = PlayerPage.html(
            audio: .url(signer.sign(ServicePaths.render(id, .audio))),
            peaks: .url(signer.sign(ServicePaths.render(id, .waveform), query: "samples_per_pixel=\(samplesPerPixel)&bits=8")),
            timeline: .url(signer.sign(ServicePaths.render(id, .timeline))),
            title: "Chorus render \(stored.manifest.id.prefix(8))")
        var headers = HTTPFields()
        // The page reaches nothing but this service; signed URLs expire, so it is never cached or referred on.
        headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
            + "connect-src 'self'; media-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
        headers[.cacheControl] = "no-store"
        headers[.init("Referrer-Policy")!] = "no-referrer"
        headers[.xContentTypeOptions] = "nosniff"
        return HTTPSupport.bytes(Data(html.utf8), contentType: "text/html; charset=utf-8", headers: headers)
    }
}

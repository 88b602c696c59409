import ChorusWire
import Foundation
import Hummingbird

/// The studio: a page at `/` (and its script and style under `/studio/`) that composes conversations, plays voices,
/// renders, plays renders with their words, transcribes and edits pronunciations through the `/v1` API — with the key
/// the user enters, kept in the tab's session storage. The page itself is open (it holds nothing of anyone's); every
/// call it makes carries the key. Plain files shipped as resources, served as they are.
struct StudioController: Sendable {
    /// The studio's files: name in the bundle, path served, content type.
    static let files: [(resource: String, path: String, contentType: String)] = [
        ("studio.html", ServicePaths.studio, "text/html; charset=utf-8"),
        ("studio.js", ServicePaths.studioScript, "text/javascript; charset=utf-8"),
        ("studio.css", ServicePaths.studioStyle, "text/css; charset=utf-8"),
    ]

    /// Nothing inline, nothing from another origin: scripts and styles only from these files, calls only to this
    /// service, audio and pictures from it or from the page's own blobs, frames (the player) from it.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; media-src 'self' blob:; "
        + "img-src 'self' data: blob:; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        for file in Self.files {
            table.add(.get, file.path, to: router) { _, _ in
                var headers = HTTPFields()
                headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
                headers[.xContentTypeOptions] = "nosniff"
                headers[.init("Referrer-Policy")!] = "no-referrer"
                headers[.cacheControl] = "no-cache"
                return HTTPSupport.bytes(try Self.data(file.resource), contentType: file.contentType, headers: headers)
            }
        }
    }

    /// A studio file's bytes, read from the bundle as `openapi.json` is (a few kilobytes, in the page cache).
    static func data(_ resource: String) throws -> Data {
        let name = resource as NSString
        guard let url = Bundle.module.url(forResource: name.deletingPathExtension, withExtension: name.pathExtension),
            let data = try? Data(contentsOf: url)
        else {
            throw ServiceError(.internalServerError, .internal, "the studio's \(resource) is missing from this build")
        }
        return data
    }
}

import ChorusOutbound
import ChorusAudio
import ChorusWire
import Foundation

/// A finished render as kept in `renders/<id>/render.json`: its manifest (without the timeline, which
/// is `timeline.json` beside it), the audio file and its strong ETag, and when it expires.
struct StoredRender: Codable, Sendable {
    var manifest: RenderManifest
    /// File name of the audio in the render's folder.
    var audioFile: String
    /// Quoted SHA-256 prefix of the audio bytes.
    var etag: String
    var audioBytes: Int
    var createdAt: Double
    var expiresAt: Double
    /// Frames per point of `waveform.dat` (peaks of the decoded stored audio).
    var waveformBase: Int?

    var isDone: Bool { manifest.status == .done }

    static let interrupted = ErrorBody.Detail(code: "interrupted", message: "the service stopped before this render finished; send the request again")

    /// The record of a render that failed with `error` (no audio).
    static func failure(id: String, format: String?, createdAt: Double, expiresAt: Double, error: ErrorBody.Detail) -> StoredRender {
        var manifest = RenderManifest(id: id, status: .failed, createdAt: Timestamp.iso(createdAt), expiresAt: Timestamp.iso(expiresAt))
        manifest.format = format
        manifest.error = error
        return StoredRender(manifest: manifest, audioFile: "", etag: "", audioBytes: 0, createdAt: createdAt, expiresAt: expiresAt)
    }

    /// The audio's media type (`audio/mpeg`, …).
    var audioContentType: String { OutputFileFormat(rawValue: manifest.format ?? "")?.mimeType ?? "application/octet-stream" }
}

/// Timestamps as the manifests print them.
enum Timestamp {
    static func iso(_ seconds: Double) -> String { DateText.iso(seconds) }
}

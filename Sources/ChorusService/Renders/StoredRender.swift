import ChorusAudio
import ChorusOutbound
import ChorusSupport
import ChorusWire
import Foundation

/// A finished render's record (`render.json` in the shared storage, a row in `chorus.sqlite`): its manifest (without
/// the timeline, which is `timeline.json` beside it), its audio's size and strong ETag, and when it expires. The audio's
/// file name follows from the format (`RenderFolder.audioName`).
struct StoredRender: Codable, Sendable {
    var manifest: RenderManifest
    /// Quoted SHA-256 prefix of the audio bytes.
    var etag: String
    var audioBytes: Int
    var createdAt: Double
    var expiresAt: Double
    /// Frames per point of `waveform.dat` (peaks of the decoded stored audio).
    var waveformBase: Int?

    var isDone: Bool { manifest.status == .done }

    /// The audio's format: set for a done render (a record without one is refused when read), `nil` for a failure.
    var format: OutputFileFormat? { manifest.format.flatMap(OutputFileFormat.init(rawValue:)) }

    /// The audio's file name in the render's folder, `nil` when it has none (failed).
    var audioName: String? { isDone ? format.map(RenderFolder.audioName) : nil }

    init(manifest: RenderManifest, etag: String, audioBytes: Int, createdAt: Double, expiresAt: Double, waveformBase: Int? = nil) {
        self.manifest = manifest
        self.etag = etag
        self.audioBytes = audioBytes
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.waveformBase = waveformBase
    }

    enum CodingKeys: String, CodingKey {
        case manifest, audioFile, etag, audioBytes, createdAt, expiresAt, waveformBase
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            manifest: try container.decode(RenderManifest.self, forKey: .manifest), etag: try container.decode(String.self, forKey: .etag),
            audioBytes: try container.decode(Int.self, forKey: .audioBytes), createdAt: try container.decode(Double.self, forKey: .createdAt),
            expiresAt: try container.decode(Double.self, forKey: .expiresAt),
            waveformBase: try container.decodeIfPresent(Int.self, forKey: .waveformBase))
    }

    /// Also writes `audioFile` (derived), which instances of earlier versions sharing the storage or the data folder
    /// still read.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(manifest, forKey: .manifest)
        try container.encode(audioName ?? "", forKey: .audioFile)
        try container.encode(etag, forKey: .etag)
        try container.encode(audioBytes, forKey: .audioBytes)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(waveformBase, forKey: .waveformBase)
    }

    static let interrupted = ErrorBody.Detail(
        code: ErrorCode.interrupted.rawValue, message: "the service stopped before this render finished; send the request again")

    /// The record of a render that failed with `error` (no audio).
    static func failure(id: String, format: String?, createdAt: Double, expiresAt: Double, error: ErrorBody.Detail) -> StoredRender {
        var manifest = RenderManifest(id: id, status: .failed, createdAt: Timestamp.iso(createdAt), expiresAt: Timestamp.iso(expiresAt))
        manifest.format = format
        manifest.error = error
        return StoredRender(manifest: manifest, etag: "", audioBytes: 0, createdAt: createdAt, expiresAt: expiresAt)
    }

    /// The audio's media type (`audio/mpeg`, …).
    var audioContentType: String { format?.mimeType ?? "application/octet-stream" }
}

/// Timestamps as the manifests print them.
enum Timestamp {
    static func iso(_ seconds: Double) -> String { DateText.iso(seconds) }
}

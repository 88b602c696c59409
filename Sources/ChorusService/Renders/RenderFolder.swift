import ChorusAudio
import Foundation

/// A render's files, the one owner of their names, paths and media types: `renders/<id>/` in the data folder, and the
/// same names under `renders/<id>/` in the shared storage.
///
/// - `audio.<format>`: the audio (`audio.mp3`, …).
/// - `timeline.json`, `captions.vtt`: written by the render.
/// - `waveform.dat`: peaks of the stored audio as a decoder reads it, `RenderExecutor.waveformBase` frames a point,
///   written by the render itself with its other files.
/// - `render.json`: the record (`StoredRender`); in the shared storage it is written last, so a render without it is
///   not there. (In the data folder only earlier versions wrote it: the record is in `chorus.sqlite`.)
struct RenderFolder: Sendable {
    /// The files of a render other than its audio.
    enum File: String, CaseIterable, Sendable {
        case record = "render.json"
        case timeline = "timeline.json"
        case captions = "captions.vtt"
        case waveform = "waveform.dat"
        /// The marker earlier versions left in a render's folder while it ran.
        case runningMarker = "job.json"

        /// Its media type as served and stored.
        var contentType: String {
            switch self {
            case .record, .timeline, .runningMarker: return "application/json"
            case .captions: return "text/vtt; charset=utf-8"
            case .waveform: return "application/octet-stream"
            }
        }
    }

    /// The files published, fetched and removed with a render's audio and record.
    static let sideFiles: [File] = [.timeline, .captions, .waveform]

    /// The audio file's name for `format`.
    static func audioName(_ format: OutputFileFormat) -> String { "audio.\(format.rawValue)" }

    /// The name of `file` of render `id` in the shared storage.
    static func objectName(_ id: String, _ file: String) -> String { "renders/\(id)/\(file)" }

    let id: String
    /// The render's folder in the data folder.
    let url: URL
    /// `url.path`, kept: the audio fast path builds a path on every request.
    let path: String

    /// Render `id`'s folder under `renders` (the data folder's `renders/`, whose path is `rendersPath`).
    init(id: String, renders: URL, rendersPath: String) {
        self.id = id
        url = renders.appendingPathComponent(id, isDirectory: true)
        path = rendersPath + "/" + id
    }

    func url(_ file: File) -> URL { url.appendingPathComponent(file.rawValue) }

    /// Where the audio of `format` is.
    func audioURL(_ format: OutputFileFormat) -> URL { url.appendingPathComponent(Self.audioName(format)) }

    /// `audioURL(format).path`, by string concatenation (per request).
    func audioPath(_ format: OutputFileFormat) -> String { path + "/" + Self.audioName(format) }
}

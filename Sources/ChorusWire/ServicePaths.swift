/// The service's paths, written once for the service (its routes, `Location` headers, the links in a manifest) and
/// for the client, so that the two cannot drift. A path with a parameter is a function of it; the service's route
/// patterns are the same functions given the parameter's placeholder (`ServicePaths.render("{id}")` is
/// `/v1/renders/{id}`).
public enum ServicePaths {
    public static let voices = "/v1/voices"
    public static let voiceClone = "/v1/voices/clone"
    /// A cloned voice.
    public static func voice(_ id: String) -> String { "\(voices)/\(id)" }
    /// ElevenLabs' voice-cloning route: a voice made from uploaded recordings, offline (multipart `name`, `files`).
    public static let voicesAdd = "/v1/voices/add"
    /// A voice being made from recordings (`voicesAdd`'s job).
    public static func voiceJob(_ id: String) -> String { "\(voices)/jobs/\(id)" }
    /// Its progress as server-sent events.
    public static func voiceJobEvents(_ id: String) -> String { "\(voiceJob(id))/events" }

    public static let clips = "/v1/clips"

    public static let renders = "/v1/renders"
    /// What a render of a request would be (voices, id), without rendering it.
    public static let renderPlan = "\(renders)/plan"
    /// A render's manifest (`GET`), or the render itself (`DELETE`).
    public static func render(_ id: String) -> String { "\(renders)/\(id)" }
    /// A part of render `id`.
    public static func render(_ id: String, _ part: RenderPart) -> String { "\(render(id))/\(part.rawValue)" }

    /// What a render has a path of its own for.
    public enum RenderPart: String, Sendable, CaseIterable {
        case audio, timeline, waveform, player, events
        case captions = "captions.vtt"
        case waveformPNG = "waveform.png"
        case waveformSVG = "waveform.svg"
    }

    public static let speech = "/v1/speech"
    /// OpenAI's speech route.
    public static let audioSpeech = "/v1/audio/speech"
    /// OpenAI's transcription route.
    public static let transcriptions = "/v1/audio/transcriptions"
    public static let alignments = "/v1/audio/alignments"

    /// The studio's page, its script and style.
    public static let studio = "/"
    public static let studioScript = "/studio/studio.js"
    public static let studioStyle = "/studio/studio.css"

    public static let lexicons = "/v1/lexicons"
    /// A stored lexicon.
    public static func lexicon(_ name: String) -> String { "\(lexicons)/\(name)" }
}

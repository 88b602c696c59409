public import Foundation

/// Drives a player page in headless Chromium through selenium (`player_check.py`) and returns what it
/// measured; every check on the page is made there. When the browser cannot start the error says so and
/// the test fails: a browser test never skips.
public enum BrowserReferee {
    public struct Report: Decodable, Sendable {
        /// Navigation start to the page being ready to use (timeline and peaks loaded, drawn, controls wired).
        public var interactiveMs: Double
        /// Navigation start to the audio's metadata (duration known, seeking possible).
        public var audioReadyMs: Double
        /// Navigation start to the waveform drawn from its peaks.
        public var peaksMs: Double
        public var duration: Double
        public var played: [Double]
        public var speakersSeen: [String]
        public var wordsSeen: Int
        public var resources: Int
        public var screenshot: String?

        enum CodingKeys: String, CodingKey {
            case interactiveMs = "interactive_ms", audioReadyMs = "audio_ready_ms", peaksMs = "peaks_ms", duration, played
            case speakersSeen = "speakers_seen", wordsSeen = "words_seen", resources, screenshot
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Opens `url`, plays, seeks through `timeline`'s messages checking the highlighted speaker, message and
    /// word, clicks a speaker, uses the keyboard and speed buttons; `secrets` must appear nowhere the page
    /// can see; `signed` asks that the page and every URL it loads carry a signature.
    public static func check(url: String, timeline: URL, screenshot: URL? = nil, secrets: [String] = [], signed: Bool = false) async throws -> Report
    {
        var arguments = ["python3", Repository.supportScript("player_check.py").path, url, timeline.path]
        if let screenshot { arguments += ["--screenshot", screenshot.path] }
        for secret in secrets { arguments += ["--secret", secret] }
        if signed { arguments.append("--expect-signed") }
        let run = try await ToolRun.run(arguments)
        guard run.status == 0 else {
            throw Failure(
                description: "browser check failed (exit \(run.status)): "
                    + run.errors.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return try JSONDecoder().decode(Report.self, from: Data(run.output.utf8))
    }

    /// What `studio_check.py` measured of the studio page.
    public struct StudioReport: Decodable, Sendable {
        /// Navigation start to the page's controls being wired.
        public var interactiveMs: Double
        public var wrongKeyMessage: String
        public var voices: Int
        /// Controls on the page (each with a name: the check fails otherwise).
        public var controls: Int
        /// The speakers' "default voice" choices, naming the voice the service would give each.
        public var defaultVoices: [String]
        /// The reason shown beside the message of a render the service refused.
        public var refusedRender: String
        public var exportedMessages: Int
        public var sampleSeconds: Double
        public var render: String
        public var wordsFollowed: Int
        /// The audio the page downloaded.
        public var downloaded: String
        public var transcript: String
        public var language: String
        public var transcriptWordsLit: Int
        public var lexicon: String
        public var resources: Int
        public var screenshot: String?

        enum CodingKeys: String, CodingKey {
            case interactiveMs = "interactive_ms", wrongKeyMessage = "wrong_key_message", voices, sampleSeconds = "sample_seconds"
            case controls, defaultVoices = "default_voices", refusedRender = "refused_render", exportedMessages = "exported_messages"
            case render, wordsFollowed = "words_followed", downloaded, transcript, language
            case transcriptWordsLit = "transcript_words_lit", lexicon, resources, screenshot
        }
    }

    /// Uses the studio at `base` as a user would (`studio_check.py` says what it does and checks): `voices` are two
    /// voice ids, `clip` a recording that says `clipWord`; downloads go to `downloads`.
    public static func studio(
        base: String, key: String, voices: [String], clip: URL, clipWord: String, downloads: URL, screenshot: URL? = nil
    ) async throws -> StudioReport {
        var arguments = ["python3", Repository.supportScript("studio_check.py").path, base, "--key", key]
        for voice in voices { arguments += ["--voice", voice] }
        arguments += ["--clip", clip.path, "--clip-words", clipWord, "--download-dir", downloads.path]
        if let screenshot { arguments += ["--screenshot", screenshot.path] }
        let run = try await ToolRun.run(arguments)
        guard run.status == 0 else {
            throw Failure(description: "studio check failed (exit \(run.status)): " + run.errors.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return try JSONDecoder().decode(StudioReport.self, from: Data(run.output.utf8))
    }
}

import ChorusAudio
import ChorusConversation
import ChorusSpeech
import ChorusText
import ChorusWire
import Foundation
import Hummingbird

/// `POST /v1/speech`: one message rendered like a conversation (same manifest and routes), and
/// `POST /v1/audio/speech`: OpenAI's speech endpoint, so an app written against the OpenAI SDK works
/// against Chorus by changing its base URL.
struct SpeechController: Sendable {
    let configuration: ServiceConfiguration
    let lexicons: LexiconStore
    let resolver: RenderRequestResolver
    let catalog: RenderCatalog
    /// The voices (which providers are set up: the stand-ins of OpenAI's names).
    let registry: VoiceRegistry
    let renders: RendersController

    /// Offline stand-ins for OpenAI's voices when no OpenAI key is configured: fixed espeak-ng voices. Each variant
    /// (`+f3`, `+m7`) is also what the name sounds like, for its natural stand-in (`naturalStandIns`).
    static let offlineVoices: [String: String] = [
        "alloy": "en-us+f3?pitch=60&rate=170", "ash": "en-us+m3?pitch=40&rate=165", "ballad": "en-gb+m1?pitch=45&rate=155",
        "coral": "en-us+f4?pitch=75&rate=172", "echo": "en-us+m1?pitch=35&rate=160", "fable": "en-gb-x-rp+m3?pitch=50&rate=165",
        "onyx": "en-us+m7?pitch=20&rate=150", "nova": "en-us+f2?pitch=70&rate=175", "sage": "en-gb+f3?pitch=55&rate=160",
        "shimmer": "en-us+f1?pitch=80&rate=170", "verse": "en+m2?pitch=45&rate=170", "marin": "en-us+f5?pitch=65&rate=168",
        "cedar": "en-us+m4?pitch=30&rate=158",
    ]

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        table.add(.post, ServicePaths.speech, to: router) { request, context in
            let body = try HTTPSupport.decode(
                SpeechRequest.self, from: try await HTTPSupport.body(of: request, limit: configuration.maxBodyBytes))
            var render = RenderRequest(
                messages: [.init(speaker: "Speaker", text: body.text, voice: body.voice)],
                output: OutputSettings(format: body.format, chapters: false))  // one utterance: no chapter
            render.lexicon = body.lexicon
            return try await renders.start(render, mode: try RenderMode(request), context: context, words: body.words ?? true)
        }
        table.add(.post, ServicePaths.audioSpeech, to: router) { request, context in
            let body = try HTTPSupport.decode(
                OpenAISpeechRequest.self, from: try await HTTPSupport.body(of: request, limit: configuration.maxBodyBytes))
            return try await openAISpeech(body, request: request, context: context)
        }
    }

    /// The OpenAI request as a one-message render at 24 kHz mono, answered with the audio bytes.
    private func openAISpeech(_ body: OpenAISpeechRequest, request: Request, context: ChorusRequestContext) async throws -> Response {
        let name = body.responseFormat?.lowercased() ?? "mp3"
        let formats: [String: OutputFileFormat] = ["mp3": .mp3, "opus": .ogg, "aac": .m4a, "flac": .flac, "wav": .wav, "pcm": .wav]
        guard let format = formats[name] else {
            throw ServiceError.badRequest("response_format: use mp3, opus, aac, flac, wav or pcm", field: "response_format")
        }
        if let speed = body.speed, !OpenAIProvider.speeds.contains(speed) {
            let range = OpenAIProvider.speeds
            throw ServiceError.badRequest(String(format: "speed must be between %g and %g", range.lowerBound, range.upperBound), field: "speed")
        }
        let voice = try resolveVoice(body.voice)
        var settings: [String: JSONValue] = [:]
        if voice.provider == "openai" {
            settings["model"] = .string(body.model)
            if let speed = body.speed { settings["speed"] = .number(speed) }
            if let instructions = body.instructions { settings["instructions"] = .string(instructions) }
        }
        var render = RenderRequest(
            messages: Self.messages(body.input, voice: voice, local: registry.providers[voice.provider]?.isLocal == true),
            voiceSettings: settings.isEmpty ? nil : [voice.provider: .object(settings)],
            output: OutputSettings(format: format.rawValue, sampleRate: 24_000, channels: 1, chapters: false))
        render.lexicon = try await lexicons.inlined(body.lexicon, caller: context.caller?.id ?? "anonymous")
        let resolved = try await resolver.resolve(render)
        let streaming = try HTTPSupport.flag(request, "stream") || body.streamFormat?.lowercased() == "audio"
        if streaming && format.isStreamable && name != "pcm" {
            return try await renders.start(render, mode: .stream, context: context)
        }
        _ = try await renders.start(render, mode: .sync, context: context)
        guard case .stored(let stored) = try await catalog.lookup(resolved.id), stored.isDone else {
            throw ServiceError(.internalServerError, .internal, "the speech was not stored")
        }
        let audio = try Data(contentsOf: try await catalog.localAudio(stored))
        if name == "pcm" { return HTTPSupport.bytes(try Self.pcm(fromWAV: audio), contentType: "audio/pcm") }
        return HTTPSupport.bytes(audio, contentType: format.mimeType)
    }

    /// The pauses after an opening clause spoken on its own (`messages`), milliseconds: about what a voice pauses after
    /// a comma, and after a sentence (each piece keeps 25 ms of its own silence at either end, `SilenceTrimmer`).
    static let clausePauseMilliseconds = 150
    static let sentencePauseMilliseconds = 450

    /// The input as the render's messages. A voice of this machine (`isLocal`) speaks its opening clause
    /// (`TextChunker.firstClause`: "Running late," of "Running late, practice moved to four.") as a message of its own,
    /// then the rest after the clause's pause, so a stream's first audio comes once a few words are spoken instead of
    /// the whole input; streamed or not, the same request gives the same audio. A hosted voice (one request), text
    /// with markup, or an opening of more than a dozen words is one message.
    static func messages(_ input: String, voice: VoiceID, local: Bool) -> [RenderRequest.Message] {
        guard local, let opening = TextChunker.firstClause(input) else {
            return [.init(speaker: "Speaker", text: input, voice: voice.description)]
        }
        return [
            .init(speaker: "Speaker", text: opening.first, voice: voice.description),
            .init(
                speaker: "Speaker", text: opening.rest, voice: voice.description,
                gapMs: opening.endsSentence ? sentencePauseMilliseconds : clausePauseMilliseconds),
        ]
    }

    /// A Chorus voice id as it is, or a bare OpenAI voice name: the OpenAI voice when a key is set, else its natural
    /// stand-in when one is installed (`naturalStandIn`), else its espeak-ng stand-in.
    func resolveVoice(_ text: String) throws -> VoiceID {
        if let voice = VoiceID(text) { return voice }
        let name = text.lowercased()
        guard let offline = Self.offlineVoices[name] else {
            throw ServiceError.badRequest(
                "voice: \"\(text.prefix(60))\" is neither a voice id (provider:voice) nor an OpenAI voice name", field: "voice")
        }
        if let openAI = registry.providers[BuiltInProvider.openai.rawValue] as? OpenAIProvider, openAI.isConfigured {
            return VoiceID(provider: "openai", voice: name)
        }
        return naturalStandIn(for: name) ?? VoiceID(provider: "espeak", voice: offline)
    }

    /// OpenAI's voices in the order they get natural stand-ins: the most used of each sound first.
    static let standInOrder = ["nova", "onyx", "shimmer", "echo", "alloy", "fable", "coral", "ash", "sage", "ballad", "marin", "verse", "cedar"]

    /// The natural voice standing in for OpenAI voice `name` with no OpenAI key (`naturalStandIns` of the service's
    /// natural default voices), `nil` when it has none and its espeak-ng stand-in speaks.
    func naturalStandIn(for name: String) -> VoiceID? {
        Self.naturalStandIns(
            natural: DefaultVoices.natural.voices(in: registry).filter { BuiltInProvider(rawValue: $0.provider)?.isNatural == true })[name]
    }

    /// Every OpenAI name's natural stand-in among `natural` (natural default voices, in order), each voice given to one
    /// name only: first the names with a Kokoro voice of their name and sound, as Kokoro-FastAPI maps them (`nova` →
    /// `af_nova`, `fable` → `bm_fable`); then the others in `standInOrder`, each the first free voice of its sound (a
    /// name's sound is its espeak-ng stand-in's, `VoiceSound.of`). Names left over keep their espeak-ng stand-ins.
    static func naturalStandIns(natural: [VoiceID]) -> [String: VoiceID] {
        func sound(of name: String) -> VoiceSound? { offlineVoices[name].flatMap { VoiceSound.of(VoiceID(provider: "espeak", voice: $0)) } }
        var result: [String: VoiceID] = [:]
        var taken = Set<VoiceID>()
        for name in standInOrder {
            let named = natural.first {
                $0.provider == BuiltInProvider.kokoro.rawValue && !$0.voice.contains("+") && $0.voice.hasSuffix("_" + name)
                    && VoiceSound.of($0) == sound(of: name)
            }
            if let named, !taken.contains(named) {
                result[name] = named
                taken.insert(named)
            }
        }
        for name in standInOrder where result[name] == nil {
            guard let voice = natural.first(where: { !taken.contains($0) && VoiceSound.of($0) == sound(of: name) }) else { continue }
            result[name] = voice
            taken.insert(voice)
        }
        return result
    }

    /// The samples of a 16-bit PCM WAV file (`response_format: "pcm"`: raw little-endian 16-bit).
    static func pcm(fromWAV data: Data) throws -> Data {
        var offset = 12
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = Int(data[offset + 4]) | Int(data[offset + 5]) << 8 | Int(data[offset + 6]) << 16 | Int(data[offset + 7]) << 24
            if id == "data" { return data.subdata(in: (offset + 8)..<min(data.count, offset + 8 + size)) }
            offset += 8 + size + (size & 1)
        }
        throw ServiceError(.internalServerError, .internal, "the rendered WAV has no data chunk")
    }
}

import ChorusAudio
import ChorusConversation
import ChorusWire
import Foundation
import Hummingbird

/// Turns a `RenderRequest` into a `ResolvedRender`, or into the error that names the field. The conversation is checked
/// by `Conversation.validated` (as a conversation file is); this adds the service's own rules: limits (413
/// `too_large`), server paths (422 `path_not_allowed`), unknown clips, undecodable inline audio, unknown providers.
/// Nothing is read from a path a client names.
struct RenderRequestResolver: Sendable {
    let configuration: ServiceConfiguration
    let clips: ClipStore
    let chorus: Chorus

    func resolve(_ request: RenderRequest) async throws -> ResolvedRender {
        try checkLimits(request)
        // The clips first, by field (uploaded ones found, inline ones probed); the conversation is then read as a
        // conversation file is (`Conversation(request:…)`), with these as its audio.
        var found: [String: (audio: Conversation.Audio?, hash: String?)] = [:]
        for (index, message) in request.messages.enumerated() {
            found["messages[\(index)]"] = try await clip(
                path: message.audio, id: message.clip, base64: message.audioBase64, field: "messages[\(index)]")
        }
        for (bookend, field) in [(request.intro, "intro"), (request.outro, "outro")] {
            if let bookend { found[field] = try await clip(path: bookend.audio, id: bookend.clip, base64: bookend.audioBase64, field: field) }
        }
        if let music = request.music { found["music"] = try await clip(path: music.audio, id: music.clip, base64: music.audioBase64, field: "music") }
        switch request.lexicon {
        case nil, .null?, .object?: break
        default:  // a stored lexicon's name was given as its entries before (`LexiconStore.inlined`)
            throw ServiceError.badRequest("lexicon: an object of entries", field: "lexicon")
        }
        let (options, format) = try outputOptions(request.output)
        let conversation = try ServiceError.fields {
            try Conversation(
                request: request, name: "request", audioFields: #""clip" or "audio_base64""#,
                fallbackVoice: request.output?.fallbackVoice.map { ($0, "output.fallback_voice") }
            ) { _, field, required in
                guard let audio = found[field]?.audio else {
                    guard !required else {
                        throw ConversationError(
                            subject: field, reason: #"send the bed as "clip" (an uploaded clip's id) or "audio_base64""#)
                    }
                    return nil
                }
                return audio
            }
        }
        if conversation.loudnessPreset != nil {
            guard request.output?.loudness == nil else {
                throw ServiceError.invalid("loudness_preset and output.loudness both set the target loudness: give one", field: "loudness_preset")
            }
            guard request.output?.normalize != false else {
                throw ServiceError.invalid("loudness_preset with output.normalize false: a preset normalizes; give one", field: "loudness_preset")
            }
        }
        // Resolved once: the id describes this plan, and the render renders it (a voice installed meanwhile changes neither).
        let plan = chorus.plan(conversation, options: options)
        let clipHashes = request.messages.indices.map { found["messages[\($0)]"]?.hash }
        for voice in plan.allVoices where chorus.configuration.registry.providers[voice.provider] == nil {
            throw ServiceError.invalid(
                "unknown voice provider \"\(voice.provider)\" (known: \(chorus.configuration.registry.ids.joined(separator: ", ")))",
                code: .unknownProvider)
        }
        // The model that gives recorded messages their words shapes the timeline; only such messages ask for it.
        let transcription = conversation.transcribe && clipHashes.contains { $0 != nil } ? configuration.transcriptionModel : nil
        let id = RenderIdentity.id(
            plan: plan, clipHashes: clipHashes, format: format, transcription: transcription,
            bookendClips: (found["intro"]?.hash, found["outro"]?.hash), musicClip: found["music"]?.hash)
        return ResolvedRender(id: id, plan: plan, format: format)
    }

    /// A message's (or the intro's or outro's) clip: an uploaded one by `id`, or inline `base64`; a `path` is refused.
    /// - Returns: the audio and its hash (the clip's id), or nothing for a spoken one.
    private func clip(path: String?, id: String?, base64: String?, field: String) async throws -> (Conversation.Audio?, String?) {
        if path != nil {
            throw ServiceError.invalid(
                "\(field).audio: the service never reads files by path; upload the clip (POST /v1/clips) and send its id as \"clip\", or send \"audio_base64\"",
                field: "\(field).audio", code: .pathNotAllowed)
        }
        if id != nil && base64 != nil {
            throw ServiceError.invalid("\(field): send either \"clip\" or \"audio_base64\", not both", field: field)
        }
        var audio: Conversation.Audio?
        var hash: String?
        if let clip = id {
            guard let stored = try await clips.get(clip) else {
                throw ServiceError.invalid(
                    "\(field).clip: no uploaded clip \(clip.prefix(80)) (clips expire with renders)",
                    field: "\(field).clip", code: .clipNotFound)
            }
            audio = .file(stored.url, label: "clip:\(clip)")
            hash = clip
        } else if let encoded = base64 {
            guard let bytes = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters), !bytes.isEmpty else {
                throw ServiceError.invalid("\(field).audio_base64 is not base64-encoded audio", field: "\(field).audio_base64")
            }
            hash = ClipStore.id(of: bytes)
            _ = try await clips.probe(bytes, id: hash!, field: "\(field).audio_base64")
            audio = .data(bytes, label: "\(field).audio_base64")
        }
        return (audio, hash)
    }

    private func checkLimits(_ request: RenderRequest) throws {
        if request.messages.count > configuration.maxMessages {
            throw ServiceError.tooLarge("messages: \(request.messages.count) messages; the limit is \(configuration.maxMessages)", field: "messages")
        }
        var total = 0
        for (index, message) in request.messages.enumerated() {
            let count = message.text?.unicodeScalars.count ?? 0  // as JSON Schema's maxLength counts
            if count > configuration.maxMessageCharacters {
                throw ServiceError.tooLarge(
                    "messages[\(index)].text: \(count) characters; the limit is \(configuration.maxMessageCharacters)",
                    field: "messages[\(index)].text")
            }
            total += count
        }
        for (field, bookend) in [("intro", request.intro), ("outro", request.outro)] {
            let count = bookend?.text?.unicodeScalars.count ?? 0
            if count > configuration.maxMessageCharacters {
                throw ServiceError.tooLarge(
                    "\(field).text: \(count) characters; the limit is \(configuration.maxMessageCharacters)", field: "\(field).text")
            }
            total += count
        }
        if total > configuration.maxTotalCharacters {
            throw ServiceError.tooLarge("messages: \(total) characters in all; the limit is \(configuration.maxTotalCharacters)", field: "messages")
        }
    }

    /// The engine's settings for `output`, with its range errors named as request fields (`output.sample_rate`).
    func outputOptions(_ output: OutputSettings?) throws -> (RenderOptions, OutputFileFormat) {
        let name = output?.format?.lowercased() ?? OutputSettings.defaultFormat
        guard OutputSettings.formats.contains(name), let format = OutputFileFormat(rawValue: name) else {
            throw ServiceError.invalid(
                "output.format: \"\(name.prefix(20))\" is not one of \(OutputSettings.formats.joined(separator: ", "))",
                field: "output.format")
        }
        var options = RenderOptions()
        options.sampleRate = output?.sampleRate
        options.channels = output?.channels ?? options.channels
        options.bitRate = output?.bitrate ?? options.bitRate
        options.targetLoudness = output?.loudness ?? options.targetLoudness
        options.normalize = output?.normalize ?? OutputSettings.defaultNormalize
        options.trimSilence = output?.trim ?? OutputSettings.defaultTrim
        options.chapters = output?.chapters ?? OutputSettings.defaultChapters
        options.jobs = configuration.workers
        try ServiceError.fields(prefix: "output.") { try options.validate(for: format) }
        return (options, format)
    }
}

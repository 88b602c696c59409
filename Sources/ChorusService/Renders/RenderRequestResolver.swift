import ChorusAudio
import ChorusVoices
import ChorusWire
import Foundation
import Hummingbird

/// Turns a `RenderRequest` into a `ResolvedRender`, or into the error that names the field:
/// limits (413 `too_large`), server paths (422 `path_not_allowed`), unknown clips, undecodable inline
/// audio, bad voices and out-of-range output settings (422). Nothing is read from a path a client names.
struct RenderRequestResolver: Sendable {
    let configuration: ServiceConfiguration
    let clips: ClipStore
    let chorus: Chorus

    func resolve(_ request: RenderRequest) async throws -> ResolvedRender {
        try checkLimits(request)
        var messages: [Conversation.Message] = []
        var clipHashes: [String?] = []
        for (index, message) in request.messages.enumerated() {
            let field = "messages[\(index)]"
            guard !message.speaker.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                throw ServiceError.invalid("\(field).speaker must not be empty", field: "\(field).speaker")
            }
            if message.audio != nil {
                throw ServiceError.invalid("\(field).audio: the service never reads files by path; upload the clip (POST /v1/clips) and send its id as \"clip\", or send \"audio_base64\"",
                                           field: "\(field).audio", code: "path_not_allowed")
            }
            if message.clip != nil && message.audioBase64 != nil {
                throw ServiceError.invalid("\(field): send either \"clip\" or \"audio_base64\", not both", field: field)
            }
            var audio: Conversation.Audio?
            var hash: String?
            if let clip = message.clip {
                guard let stored = try await clips.get(clip) else {
                    throw ServiceError.invalid("\(field).clip: no uploaded clip \(clip.prefix(80)) (clips expire with renders)",
                                               field: "\(field).clip", code: "clip_not_found")
                }
                audio = .file(stored.url, label: "clip:\(clip)")
                hash = clip
            } else if let encoded = message.audioBase64 {
                guard let bytes = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters), !bytes.isEmpty else {
                    throw ServiceError.invalid("\(field).audio_base64 is not base64-encoded audio", field: "\(field).audio_base64")
                }
                hash = ClipStore.id(of: bytes)
                _ = try await clips.probe(bytes, id: hash!, field: "\(field).audio_base64")
                audio = .data(bytes, label: "\(field).audio_base64")
            }
            let text = message.text?.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty == false ? message.text : nil
            if audio == nil && text == nil {
                throw ServiceError.invalid("\(field) needs \"text\", \"clip\" or \"audio_base64\"", field: field)
            }
            messages.append(Conversation.Message(speaker: message.speaker, audio: audio, text: text,
                                                 voice: try message.voice.map { try voice($0, field: "\(field).voice") }))
            clipHashes.append(hash)
        }
        var voices: [String: VoiceID] = [:]
        for (speaker, id) in request.voices ?? [:] { voices[speaker] = try voice(id, field: "voices.\(speaker)") }
        var settings: [String: [String: JSONValue]] = [:]
        for (provider, value) in request.voiceSettings ?? [:] {
            guard let object = value.object else { throw ServiceError.invalid("voice_settings.\(provider) must be an object", field: "voice_settings.\(provider)") }
            settings[provider.lowercased()] = object
        }
        let gap = request.gapMs ?? RenderOptions.defaultGapMilliseconds
        try mapped("gap_ms") { try RenderOptions.validate(gapMilliseconds: gap) }
        let (options, format) = try outputOptions(request.output)
        let fallback = try request.output?.fallbackVoice.map { try voice($0, field: "output.fallback_voice") }
        let conversation = Conversation(messages: messages, gapMilliseconds: gap, voices: voices, voiceSettings: settings,
                                        fallbackVoice: fallback, name: "request")
        let assigned = chorus.voices(for: conversation)
        for voice in Set(assigned.compactMap { $0 } + [fallback].compactMap { $0 }) where chorus.configuration.registry.providers[voice.provider] == nil {
            throw ServiceError.invalid("unknown voice provider \"\(voice.provider)\" (known: \(chorus.configuration.registry.ids.joined(separator: ", ")))",
                                       code: "unknown_provider")
        }
        let id = RenderIdentity.id(conversation: conversation, voices: assigned, clipHashes: clipHashes, options: options, format: format,
                                   fallbackVoice: fallback)
        return ResolvedRender(id: id, conversation: conversation, options: options, format: format)
    }

    private func checkLimits(_ request: RenderRequest) throws {
        guard !request.messages.isEmpty else { throw ServiceError.invalid("messages must not be empty", field: "messages") }
        if request.messages.count > configuration.maxMessages {
            throw ServiceError.tooLarge("messages: \(request.messages.count) messages; the limit is \(configuration.maxMessages)", field: "messages")
        }
        var total = 0
        for (index, message) in request.messages.enumerated() {
            let count = message.text?.unicodeScalars.count ?? 0   // as JSON Schema's maxLength counts
            if count > configuration.maxMessageCharacters {
                throw ServiceError.tooLarge("messages[\(index)].text: \(count) characters; the limit is \(configuration.maxMessageCharacters)",
                                            field: "messages[\(index)].text")
            }
            total += count
        }
        if total > configuration.maxTotalCharacters {
            throw ServiceError.tooLarge("messages: \(total) characters in all; the limit is \(configuration.maxTotalCharacters)", field: "messages")
        }
    }

    func voice(_ text: String, field: String) throws -> VoiceID {
        guard let voice = VoiceID(text) else {
            throw ServiceError.invalid("\(field): \"\(text.prefix(100))\" is not a voice id of the form provider:voice", field: field)
        }
        return voice
    }

    /// The engine's settings for `output`, with its range errors named as request fields (`output.sample_rate`).
    func outputOptions(_ output: OutputSettings?) throws -> (RenderOptions, OutputFileFormat) {
        let name = output?.format?.lowercased() ?? "mp3"
        guard let format = OutputFileFormat(rawValue: name), format != .aiff else {
            throw ServiceError.invalid("output.format: \"\(name.prefix(20))\" is not one of mp3, m4a, ogg, wav, flac", field: "output.format")
        }
        var options = RenderOptions()
        options.sampleRate = output?.sampleRate
        options.channels = output?.channels ?? options.channels
        options.bitRate = output?.bitrate ?? options.bitRate
        options.targetLoudness = output?.loudness ?? options.targetLoudness
        options.normalize = output?.normalize ?? true
        options.trimSilence = output?.trim ?? true
        options.chapters = output?.chapters ?? true
        options.jobs = configuration.workers
        try mapped("output") { try options.validate(for: format) }
        return (options, format)
    }

    /// Runs `body`; an engine range error becomes a 422 naming the request field.
    private func mapped(_ prefix: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as AudioError {
            let field = prefix == "gap_ms" ? "gap_ms" : "\(prefix).\(error.subject)"
            throw ServiceError.invalid("\(field)\(error.value.map { " \($0)" } ?? ""): \(error.reason)", field: field)
        }
    }
}

import ChorusAudio
import ChorusConversation
import ChorusSpeech
import ChorusWire
import Foundation
import Hummingbird

/// How renders are described to clients: manifests with their URLs and timeline, and SSE events.
enum RenderResponses {
    /// The manifest of a finished render; `done` ones carry their URLs and timeline (without words if asked).
    static func manifest(_ stored: StoredRender, data: DataDirectory, words: Bool = true) -> RenderManifest {
        var manifest = stored.manifest
        guard stored.isDone else { return manifest }
        let id = manifest.id
        manifest.audioURL = ServicePaths.render(id, .audio)
        manifest.timelineURL = ServicePaths.render(id, .timeline)
        manifest.waveformURL = ServicePaths.render(id, .waveform)
        manifest.captionsURL = ServicePaths.render(id, .captions)
        manifest.playerURL = ServicePaths.render(id, .player)
        if let json = try? Data(contentsOf: data.render(manifest.id).url(.timeline)),
            var timeline = try? JSONDecoder().decode(Timeline.self, from: json)
        {
            if !words {
                timeline.segments = timeline.segments.map {
                    var segment = $0
                    segment.words = nil
                    return segment
                }
            }
            manifest.timeline = timeline
        }
        return manifest
    }

    /// What a render of `resolved` would be: its id, each speaker's voice (their first spoken message's; whether the
    /// defaults gave it), each message's.
    static func plan(_ resolved: ResolvedRender, rendered: Bool) -> RenderPlanResponse {
        let conversation = resolved.conversation
        var speakers: [RenderPlanResponse.Speaker] = []
        func add(_ message: Conversation.Message, _ voice: VoiceID?) {
            guard !message.speaker.isEmpty else { return }  // an intro or outro clip
            let named = message.voice != nil || conversation.voices[message.speaker] != nil
            let entry = RenderPlanResponse.Speaker(name: message.speaker, voice: voice?.description, byDefault: voice != nil && !named)
            if let known = speakers.firstIndex(where: { $0.name == message.speaker }) {
                if speakers[known].voice == nil && voice != nil { speakers[known] = entry }
            } else {
                speakers.append(entry)
            }
        }
        if let intro = conversation.intro { add(intro, resolved.plan.introVoice) }
        for (message, voice) in zip(conversation.messages, resolved.plan.voices) { add(message, voice) }
        if let outro = conversation.outro { add(outro, resolved.plan.outroVoice) }
        return RenderPlanResponse(id: resolved.id, rendered: rendered, speakers: speakers, messages: resolved.plan.voices.map { $0?.description })
    }

    /// One Server-Sent Event.
    static func event<T: Encodable>(_ name: String, _ value: T) -> ByteBuffer {
        let json = (try? HTTPSupport.encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return ByteBuffer(string: "event: \(name)\ndata: \(json)\n\n")
    }

    /// The SSE text of a feed event.
    static func event(_ event: RenderFeedEvent, data: DataDirectory, words: Bool = true) -> ByteBuffer {
        switch event {
        case .progress(let progress): return self.event("progress", progress)
        case .segment(var segment):
            if !words { segment.words = nil }
            return self.event("segment", segment)
        case .done(let stored): return self.event("done", manifest(stored, data: data, words: words))
        case .failed(let error): return self.event("error", error.body)
        }
    }

    /// A failed render's error as the service reports it.
    static func failure(of stored: StoredRender) -> ServiceError {
        ServiceError(
            .internalServerError, code: stored.manifest.error?.code ?? ErrorCode.internal.rawValue,
            stored.manifest.error?.message ?? "the render failed",
            field: stored.manifest.error?.field)
    }

    /// The manifest of a shared job another instance has queued or runs.
    static func manifest(_ job: SharedQueue.Entry) -> RenderManifest {
        var manifest = RenderManifest(
            id: job.id, status: job.status == .running ? .running : .queued, createdAt: Timestamp.iso(job.createdAt),
            expiresAt: Timestamp.iso(job.expiresAt))
        manifest.progress = job.progress
        manifest.format = job.format
        return manifest
    }

    /// Replays a finished render as events: final progress, every segment, then `done` (or `error`).
    static func replay(_ stored: StoredRender, data: DataDirectory) -> [RenderFeedEvent] {
        guard stored.isDone else { return [.failed(failure(of: stored))] }
        let timeline = manifest(stored, data: data).timeline
        let total = timeline?.segments.count ?? 0
        var events: [RenderFeedEvent] = [.progress(RenderProgressBody(synthesized: total, rendered: total, total: total))]
        events += (timeline?.segments ?? []).map { .segment($0) }
        events.append(.done(stored))
        return events
    }
}

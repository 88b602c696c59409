import ChorusConversation
import ChorusSpeech
import ChorusSupport
import ChorusVoiceMaking
import ChorusWire
import Foundation
import Hummingbird

/// ElevenLabs' voice-cloning shape, offline: `POST /v1/voices/add` (multipart `name`, `files`; `labels` with a
/// `gender` is the hint; Chorus's own `candidates` and `seed`) starts a Kokoro voice made from the recordings
/// (`VoiceWorkshop`), answered at once with its `voice_id` and its job; `GET /v1/voices/jobs/{id}` follows it; the voice
/// is in `GET /v1/voices` when made, for the key that made it only, and `DELETE /v1/voices/{voice_id}` stops or removes
/// it. The recordings are kept only while the voice is being made.
struct VoiceWorkshopRoutes: Sendable {
    let workshop: VoiceWorkshop
    let uploads: URL
    let maxBodyBytes: Int
    let pool: WorkerPool

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        table.add(.post, ServicePaths.voicesAdd, to: router) { request, context in
            try HTTPSupport.json(try await add(request, owner: Self.owner(context)))
        }
        table.add(.get, ServicePaths.voiceJob("{id}"), to: router) { _, context in
            let id = context.parameters.get("id") ?? ""
            guard let job = workshop.job(id, owner: Self.owner(context)) else { throw ServiceError.notFound("voice job \(id.prefix(40))") }
            return try HTTPSupport.json(Self.described(job))
        }
        table.add(.get, ServicePaths.voiceJobEvents("{id}"), to: router) { _, context in
            let id = context.parameters.get("id") ?? ""
            let owner = Self.owner(context)
            guard workshop.job(id, owner: owner) != nil else { throw ServiceError.notFound("voice job \(id.prefix(40))") }
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    for await (name, job) in Self.events(of: id, owner: owner, in: workshop) {
                        try await writer.write(RenderResponses.event(name, job))
                    }
                    try await writer.finish(nil)
                })
        }
    }

    /// How often a job's events look for a change.
    static let eventInterval: Duration = .milliseconds(250)

    /// A job's events as a render's are sent: `progress` (the job as `GET …/jobs/{id}` gives it) whenever it changes,
    /// then `ready`, `failed` or `cancelled` with the job as it ended, and the stream ends. A job forgotten meanwhile
    /// (the workshop keeps the last 64 finished) ends it with `failed`.
    static func events(of id: String, owner: String, in workshop: VoiceWorkshop) -> AsyncStream<(String, VoiceJob)> {
        AsyncStream { continuation in
            let task = Task {
                var last: VoiceJob?
                while !Task.isCancelled {
                    guard let job = workshop.job(id, owner: owner) else {
                        if let last { continuation.yield(("failed", last)) }
                        break
                    }
                    let described = described(job)
                    if [.ready, .failed, .cancelled].contains(job.state) {
                        continuation.yield((job.state.rawValue, described))
                        break
                    }
                    if described != last {
                        continuation.yield(("progress", described))
                        last = described
                    }
                    try? await Task.sleep(for: eventInterval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    static func owner(_ context: ChorusRequestContext) -> String { context.caller?.id ?? "anonymous" }

    static func described(_ job: VoiceWorkshop.Job) -> VoiceJob {
        VoiceJob(
            id: job.id, voiceID: "kokoro:\(job.voice)", name: job.displayName, status: job.state.rawValue,
            progress: job.state == .ready ? 1 : job.total > 0 ? Double(job.done) / Double(job.total) : 0, similarity: job.best, error: job.error)
    }

    private func add(_ request: Request, owner: String) async throws -> VoiceAddResponse {
        let (body, boundary) = try await HTTPSupport.multipartBody(of: request, limit: maxBodyBytes)
        let folder = uploads.appendingPathComponent(UUID().uuidString.lowercased(), isDirectory: true)
        let (name, files, options) = try await pool.run { () throws -> (String, [URL], VoiceMaker.Options) in
            let form: MultipartForm
            do {
                form = try MultipartForm(body: body, boundary: boundary)
            } catch let error as MultipartError {
                throw ServiceError.badRequest(error.description, field: "body")
            }
            let name = try (form.text("name") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.count <= 100 else { throw ServiceError.invalid("name must be 1 to 100 characters", field: "name") }
            let parts = form.parts.filter { $0.name == "files" || $0.name == "files[]" }
            guard !parts.isEmpty, parts.count <= Enrolment.mostRecordings else {
                throw ServiceError.invalid("files: give 1 to \(Enrolment.mostRecordings) recordings (got \(parts.count))", field: "files")
            }
            var options = VoiceMaker.Options()
            if let labels = try form.text("labels"), let data = labels.data(using: .utf8) {
                guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                    throw ServiceError.invalid("labels must be a JSON object", field: "labels")
                }
                if let gender = object["gender"] as? String {
                    guard let hint = VoiceSound(rawValue: gender.lowercased()) else {
                        throw ServiceError.invalid("labels.gender must be female or male", field: "labels.gender")
                    }
                    options.hint = hint
                }
            }
            if let text = try form.text("candidates") {
                guard let candidates = Int(text), (VoiceMaker.leastCandidates...VoiceMaker.mostCandidates).contains(candidates) else {
                    throw ServiceError.invalid(
                        "candidates must be a whole number from \(VoiceMaker.leastCandidates) to \(VoiceMaker.mostCandidates)", field: "candidates")
                }
                options.candidates = candidates
            }
            if let text = try form.text("seed") {
                guard let seed = UInt64(text) else { throw ServiceError.invalid("seed must be a whole number from 0", field: "seed") }
                options.seed = seed
            }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let files = try parts.enumerated().map { index, part -> URL in
                let data = form.data(of: part)
                guard !data.isEmpty else { throw ServiceError.invalid("files[\(index)]: empty", field: "files[\(index)]") }
                let file = folder.appendingPathComponent("recording-\(index + 1)")
                try data.write(to: file)
                return file
            }
            return (name, files, options)
        }
        do {
            let job = try workshop.submit(owner: owner, displayName: name, files: files, options: options) {
                try? FileManager.default.removeItem(at: folder)
            }
            return VoiceAddResponse(voiceID: "kokoro:\(job.voice)", status: job.state.rawValue, job: ServicePaths.voiceJob(job.id))
        } catch let refusal as VoiceWorkshop.Refusal {
            try? FileManager.default.removeItem(at: folder)
            if refusal.isFull { throw ServiceError(.serviceUnavailable, .overloaded, refusal.description, retryAfter: 30) }
            throw ServiceError.invalid(refusal.description, field: "name")
        }
    }

    /// Refuses a render naming a voice made for another key, as a voice that does not exist.
    static func checkOwnership(of request: RenderRequest, owner: String) throws {
        let named =
            request.messages.compactMap(\.voice) + Array((request.voices ?? [:]).values)
            + [request.intro?.voice, request.outro?.voice].compactMap { $0 }
        for voice in named where voice.lowercased().hasPrefix("kokoro:") {
            let blend = voice.dropFirst("kokoro:".count).prefix { $0 != "?" }
            for part in blend.split(separator: "+") {
                let name = part.prefix { $0 != "(" }.trimmingCharacters(in: .whitespaces)
                guard VoiceWorkshop.owns(name, owner: owner) else {
                    throw ServiceError(.unprocessableContent, .unknownVoice, "no Kokoro voice \"\(name)\"", field: "voice")
                }
            }
        }
    }
}

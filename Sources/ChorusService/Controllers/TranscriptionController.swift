import ChorusAudio
import ChorusConversation
import ChorusListening
import ChorusSpeech
import ChorusWire
import Foundation
import Hummingbird

/// `POST /v1/audio/transcriptions`: OpenAI's transcription endpoint (multipart `file`, `model`, `language`, `prompt`,
/// `response_format`, `temperature`, `timestamp_granularities[]`), answered by the service's offline Whisper or by the
/// provider its `model` name is configured to (`TranscriptionRoutes`), so an app written against the OpenAI SDK works
/// against Chorus by changing its base URL; `clip` names an uploaded clip instead of sending `file`.
/// `POST /v1/audio/alignments`: the same with the `text` spoken in the audio, answered with every word of that text timed.
///
/// The form is read and the audio decoded on the worker threads, the model runs on its own thread: no event loop
/// waits. Each request is one of at most `queueLimit` transcriptions (`SpeechRecognition`).
struct TranscriptionController: Sendable {
    let chorus: Chorus
    let clips: ClipStore
    let configuration: ServiceConfiguration
    let recognition: SpeechRecognition
    let transcriptionRoutes: TranscriptionRoutes
    let transcripts: TranscriptCache

    func register(on router: some RouterMethods<ChorusRequestContext>, table: RouteTable) {
        table.add(.post, ServicePaths.transcriptions, to: router) { request, _ in
            try await answer(request, alignment: false)
        }
        table.add(.post, ServicePaths.alignments, to: router) { request, _ in
            try await answer(request, alignment: true)
        }
    }

    private func answer(_ request: Request, alignment: Bool) async throws -> Response {
        let (body, boundary) = try await HTTPSupport.multipartBody(of: request, limit: configuration.maxBodyBytes)
        return try await recognition.admitted {
            let pool = chorus.workerPool
            let form = try await pool.run {
                do {
                    return try TranscriptionRequest(form: try MultipartForm(body: body, boundary: boundary), alignment: alignment)
                } catch let error as MultipartError {
                    throw ServiceError.badRequest(error.description, field: "body")
                } catch let error as RequestBodyError {
                    throw ServiceError(error)
                }
            }
            let fresh = request.headers[.cacheControl]?.lowercased().contains("no-cache") == true
            let samples: [Float]
            let transcript: Transcript
            switch try transcriptionRoutes.answerer(for: form.model, recognition: recognition) {
            case .offline(let name):
                // The default model hears English; another language given goes to the multilingual model.
                let chosen =
                    name ?? recognition.modelName.map { WhisperModel.model(for: form.language, defaultModel: $0, in: recognition.folder) }
                let recognizer = try await recognition.recognizer(named: chosen)
                let language = try Self.language(form.language, for: recognizer)
                let bytes: Data
                (bytes, samples) = try await audio(of: form)
                transcript = try await transcribe(bytes, samples, language: language, with: recognizer, fresh: fresh)
            case .remote(let provider):
                guard provider.isConfigured else {
                    throw ServiceError(
                        .conflict, .providerNotConfigured, "model \(form.model): \(provider.id) has no API key configured on this service",
                        field: "model")
                }
                (_, samples) = try await audio(of: form)
                transcript = try await transcribe(samples, language: form.language, by: provider, fresh: fresh)
            }
            var transcription = transcript.transcription
            if alignment, let text = form.text {
                // Matching words and finding pauses is CPU work (a text of thousands of words): on the worker threads.
                transcription = try await chorus.workerPool.run {
                    transcript.alignment(of: text, samples: samples, rate: WhisperRecognizer.sampleRate)
                }
            }
            if form.format == .verboseJSON {
                if !form.granularities.contains(.word) { transcription.words = nil }
                if !form.granularities.contains(.segment) { transcription.segments = nil }
            }
            return HTTPSupport.bytes(Data(form.format.render(transcription).utf8), contentType: form.format.mimeType)
        }
    }

    /// The model's code for the request's language (`WhisperRecognizer.languageCode`, the one reading of it that the
    /// command line and the library use too).
    /// - Throws: `ServiceError` 400 naming `language` for one the model does not transcribe.
    static func language(_ language: String?, for recognizer: WhisperRecognizer) throws -> String? {
        guard let language else { return nil }
        do {
            return try recognizer.languageCode(language)
        } catch let error as VoiceError {
            throw ServiceError.badRequest("language: \(error.message)", field: "language")
        }
    }

    /// The transcript of `bytes` (decoded: `samples`) in `language` (detected when `nil`): the stored one if these bytes
    /// were transcribed by this model so before (unless `fresh`: the request said `Cache-Control: no-cache`), else the
    /// model's (then stored).
    private func transcribe(_ bytes: Data, _ samples: [Float], language: String?, with recognizer: WhisperRecognizer, fresh: Bool) async throws
        -> Transcript
    {
        let cache = transcripts
        let pool = chorus.workerPool
        let options = ["sharpened"] + (language.map { ["language \($0)"] } ?? [])
        let key = try await pool.run { TranscriptCache.key(audio: bytes, model: recognizer.modelIdentity, options: options) }
        if !fresh, let stored = try await pool.run({ cache.lookup(key) }) { return stored }
        let transcript = try await recognizer.transcribe(samples, language: language)
        try await pool.run { cache.store(key, transcript) }
        return transcript
    }

    /// The transcript of `samples` by a remote `provider`, through the engine's policies (at most `providerConcurrency`
    /// requests at once, retries with `Retry-After`, the transcript cache unless `fresh`).
    /// - Throws: `ServiceError`: 400 for what the provider refused as asked, 409 without its key, else 502 naming it.
    private func transcribe(_ samples: [Float], language: String?, by provider: any SpeechToTextProvider, fresh: Bool) async throws -> Transcript {
        do {
            return try await chorus.transcribe(SpeechToTextRequest(samples: samples, language: language), by: provider, cached: !fresh)
        } catch let error as VoiceError {
            throw ServiceError.provider(error, field: "model")
        }
    }

    /// The request's audio: its bytes, and as Whisper hears it.
    /// - Throws: `ServiceError`: 400 naming the part for what is not audio or has none, 413 for audio longer than
    ///   `maxClipSeconds`, 422 for an unknown clip.
    private func audio(of form: TranscriptionRequest) async throws -> (Data, [Float]) {
        let field: String
        let data: Data
        switch form.audio {
        case .file(let bytes, _):
            (field, data) = ("file", bytes)
        case .clip(let id):
            guard let clip = try await clips.get(id) else {
                throw ServiceError.invalid("clip: no uploaded clip \(id.prefix(80))", field: "clip", code: .clipNotFound)
            }
            field = "clip"
            data = try await chorus.workerPool.run { try Data(contentsOf: clip.url) }
        }
        let limit = configuration.maxClipSeconds
        let samples: [Float]
        do {
            samples = try await chorus.workerPool.run { try WhisperRecognizer.audio(data: data, name: field, limit: limit) }
        } catch {
            throw ServiceError(error, during: .upload(field: field))
        }
        guard samples.count <= Int(limit * Double(WhisperRecognizer.sampleRate)) else {
            throw ServiceError.tooLarge("\(field): longer than \(Int(limit)) s of audio (the limit)", field: field)
        }
        guard samples.count >= WhisperRecognizer.sampleRate / 10 else {
            throw ServiceError.badRequest("\(field): no audio in it (shorter than 0.1 s)", field: field)
        }
        return (data, samples)
    }
}

import ChorusAudio
import ChorusListening
import ChorusSpeech
import Foundation

/// How one render moves: every message is *sourced* (a recorded clip at once, a text message from
/// the cache or its provider), then *processed* (decode → trim → normalize → fade, on worker
/// threads), then *appended* in order by the encoder; a recorded one is also *heard* (its words,
/// `MessageListener`) on the recognizer's own threads while the render goes on: the audio never waits
/// for words, the message's timeline entry (its `.segment` event, in order) and the files written at
/// the end (timeline, captions, chapter titles) do. Four bounds keep memory flat:
/// sourcing runs at most `lookAhead` messages ahead of the encoder (synthesized audio is small, and
/// providers stay busy), processing at most `options.jobs + 1` (processed PCM is what is large),
/// the encoder holds one message at a time, and at most `mostUnheard` messages wait to be heard
/// (each as 16 kHz speech, 64 KB a second).
struct RenderPipeline: Sendable {
    let chorus: Chorus
    let plan: RenderPlan
    let outputs: RenderOutputs
    var conversation: Conversation { plan.conversation }
    var options: RenderOptions { plan.options }

    /// Recorded messages get words when the conversation asks and the instance has a recognizer; so do synthesized
    /// ones whose voice gave none (OpenAI's): their text is aligned to the speech.
    private var listening: Bool { conversation.transcribe && !chorus.listener.transcriber.isOff }

    /// Messages placed in the audio whose words may still be heard at most (the encoder waits beyond it).
    static let mostUnheard = 64

    /// Seconds of speech gathered to be heard together, with the gaps Whisper leaves between them when it aligns
    /// (`togetherGap`): one of its windows, so that each is heard as soon as it is full (groups ready at once are heard
    /// side by side on the lanes); unless the stretch of messages to hear ends first.
    static let togetherSeconds = WhisperRecognizer.alignmentWindowSeconds
    static let togetherGap = WhisperRecognizer.alignmentGap

    /// Messages heard together at most: placed messages wait for their words, so a group must stay well within
    /// `mostUnheard` for the encoder to reach the rest of its stretch.
    static let mostTogether = mostUnheard / 2

    func run(emit: @escaping @Sendable (RenderEvent) -> Void) async throws -> RenderResult {
        let messages = conversation.messages
        guard !messages.isEmpty else {
            throw ConversationError(subject: conversation.name, reason: "has no messages")
        }
        let voices = plan.voices
        let progress = JobProgress(RenderProgress(total: messages.count, toSynthesize: voices.compactMap { $0 }.count)) {
            emit(.progress($0))
        }
        func title(_ bookend: Conversation.Message?, _ name: String) -> String? {
            bookend.map { $0.text == nil || $0.speaker.isEmpty ? name : ChapterTitle.make(speaker: $0.speaker, text: $0.visibleText) }
        }
        let session = try RenderSession(
            options: options, gapMilliseconds: conversation.gapMilliseconds,
            messageGaps: messages.map(\.gapMilliseconds), outputs: outputs,
            chapterTitles: messages.map { ChapterTitle.make(speaker: $0.speaker, text: $0.visibleText) },
            bookends: (title(conversation.intro, "Intro"), title(conversation.outro, "Outro")),
            music: conversation.music,
            growingTitles: listening ? messages.filter { $0.audio != nil && $0.text == nil }.count : 0)
        if let kokoro = chorus.configuration.registry.providers[BuiltInProvider.kokoro.rawValue] as? KokoroProvider {
            session.madeVoices = MadeVoices.used(in: (voices + [plan.introVoice, plan.outroVoice]).compactMap { $0 }, kokoro: kokoro.folder)
        }
        let synthesizer = chorus.synthesizer
        defer { synthesizer.cache.evict() }
        do {
            let pool = chorus.pool
            // The outro is made while the messages are; the intro first, since it is heard first.
            async let outro = bookend(conversation.outro, "outro", voice: plan.outroVoice, session: session, progress: progress, emit: emit)
            if let intro = try await bookend(conversation.intro, "intro", voice: plan.introVoice, session: session, progress: progress, emit: emit) {
                try await pool.run { try session.appendIntro(intro.processed, for: intro.message) }
            }
            try await stitchAll(messages, voices: voices, session: session, progress: progress, emit: emit)
            if let outro = try await outro {
                try await pool.run { try session.appendOutro(outro.processed, for: outro.message) }
            }
            return try await pool.run { try session.finish() }
        } catch {
            session.discard(error)
            throw error
        }
    }

    /// The messages, sourced, processed, placed and heard as `RenderStitching` says, in one task group.
    private func stitchAll(
        _ messages: [Conversation.Message], voices: [VoiceID?], session: RenderSession, progress: JobProgress,
        emit: @escaping @Sendable (RenderEvent) -> Void
    ) async throws {
        let processingWindow = options.jobs + 1
        let language = conversation.textReading.statedLanguage.map { _ in conversation.textReading.primaryLanguage }
        var setting = RenderStitching.Setting(
            chorus: chorus, conversation: conversation, voices: voices, session: session, progress: progress, emit: emit,
            listening: listening, together: listening && chorus.listener.hearsTogether, processingWindow: processingWindow,
            lookAhead: min(messages.count, max(processingWindow, 2 * chorus.configuration.providerConcurrency + processingWindow)),
            language: language)
        setting.streaming = outputs.stream != nil
        try await withThrowingTaskGroup(of: RenderStitching.Step.self) { group in
            var stitching = RenderStitching(setting)
            stitching.launch(in: &group)
            while let step = try await group.next() {
                try await stitching.advance(step, in: &group)
            }
        }
    }

    /// A message (or bookend) whose cached clip did not decode: its cache entries removed, and a warning that it is
    /// synthesized again (the caller then synthesizes it afresh).
    static func discard(
        _ stale: SourcedMessage, subject: String, error: AudioError, synthesizer: MessageSynthesizer,
        emit: @Sendable (RenderEvent) -> Void
    ) {
        stale.cacheKeys.forEach(synthesizer.cache.remove)
        emit(.warning("\(subject): a cached clip did not decode (\(error)); synthesizing it again"))
    }

    /// The intro or outro (`role`) sourced and processed like a message: its clip, or its line spoken by `voice`
    /// (from the cache, synthesized again if a cached clip no longer decodes, as a message is). Errors name it by `role`.
    private func bookend(
        _ bookend: Conversation.Message?, _ role: String, voice: VoiceID?, session: RenderSession, progress: JobProgress,
        emit: @escaping @Sendable (RenderEvent) -> Void
    ) async throws -> (processed: ProcessedMessage, message: RenderMessage)? {
        guard let bookend else { return nil }
        let processor = session.processor
        var fresh = false
        while true {
            var sourced: SourcedMessage
            if let voice {
                do {
                    sourced = try await chorus.synthesizer.synthesize(
                        index: -1, message: bookend, voice: voice, in: conversation,
                        fresh: fresh, progress: progress)
                } catch var error as SynthesisError {
                    error.bookend = role
                    throw error
                }
            } else {
                sourced = SourcedMessage(message: Self.recorded(bookend), cacheKeys: [])
            }
            sourced.message.subject = role
            let message = sourced.message
            do {
                return (try await chorus.pool.run { try processor.process(message, index: -1) }, message)
            } catch let error as AudioError {
                guard !fresh, !sourced.cacheKeys.isEmpty else { throw error.about(role) }
                Self.discard(sourced, subject: role, error: error, synthesizer: chorus.synthesizer, emit: emit)
                fresh = true
            }
        }
    }

    /// A recorded message as render input.
    static func recorded(_ message: Conversation.Message) -> RenderMessage {
        switch message.audio! {
        case .file(let url, let label):
            return RenderMessage(speaker: message.speaker, source: .file(url), label: label, text: message.visibleText)
        case .data(let data, let label):
            return RenderMessage(speaker: message.speaker, source: .encoded(data), label: label, text: message.visibleText)
        }
    }
}

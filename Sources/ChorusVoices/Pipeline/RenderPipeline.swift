import ChorusAudio
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
    let conversation: Conversation
    let options: RenderOptions
    let outputs: RenderOutputs

    private enum Step: Sendable {
        case sourced(Int, SourcedMessage)
        case processed(Int, ProcessedMessage)
        case heard(Int, MessageListener.Heard)
        /// What several messages heard together gave each.
        case heardTogether([(Int, MessageListener.Heard)])
        /// Message `index` must be heard (nothing known of it): it waits to be heard with others.
        case toHear(Int, MessageListener.Speech)
        /// Message `index`'s speech, as it is heard, is ready to listen to.
        case speech(Int, MessageListener.Speech)
        /// The cache entries of message `index` did not decode: synthesize it afresh.
        case staleCache(Int, AudioError)
    }

    /// Recorded messages get words when the conversation asks and the instance has a recognizer; so do synthesized
    /// ones whose voice gave none (OpenAI's): their text is aligned to the speech.
    private var listening: Bool { conversation.transcribe && !chorus.listener.transcriber.isOff }

    /// Messages placed in the audio whose words may still be heard at most (the encoder waits beyond it).
    static let mostUnheard = 64

    /// Seconds of speech gathered to be heard together (by the offline Whisper: two windows, one for each of two
    /// lanes), unless the stretch of recordings ends first.
    static let togetherSeconds = 2 * SpeechChunks.longest

    /// Recordings heard together at most: placed messages wait for their words, so a group must stay well within
    /// `mostUnheard` for the encoder to reach the rest of its stretch.
    static let mostTogether = mostUnheard / 2

    func run(emit: @escaping @Sendable (RenderEvent) -> Void) async throws -> RenderResult {
        let messages = conversation.messages
        guard !messages.isEmpty else {
            throw AudioError(.invalidConversation, subject: conversation.name, reason: "has no messages")
        }
        let assigned = chorus.allVoices(for: conversation)
        let voices = assigned.messages
        let progress = JobProgress(RenderProgress(total: messages.count, toSynthesize: voices.compactMap { $0 }.count)) {
            emit(.progress($0))
        }
        func title(_ bookend: Conversation.Message?, _ name: String) -> String? {
            bookend.map { $0.text == nil || $0.speaker.isEmpty ? name : ChapterTitle.make(speaker: $0.speaker, text: $0.visibleText) }
        }
        let session = try RenderSession(options: options, gapMilliseconds: conversation.gapMilliseconds,
                                        messageGaps: messages.map(\.gapMilliseconds), outputs: outputs,
                                        chapterTitles: messages.map { ChapterTitle.make(speaker: $0.speaker, text: $0.visibleText) },
                                        bookends: (title(conversation.intro, "Intro"), title(conversation.outro, "Outro")),
                                        music: conversation.music,
                                        growingTitles: listening ? messages.filter { $0.audio != nil && $0.text == nil }.count : 0)
        let synthesizer = chorus.synthesizer
        defer { synthesizer.cache.evict() }
        do {
            let pool = chorus.pool
            // The outro is made while the messages are; the intro first, since it is heard first.
            async let outro = bookend(conversation.outro, "outro", voice: assigned.outro, session: session, progress: progress)
            if let intro = try await bookend(conversation.intro, "intro", voice: assigned.intro, session: session, progress: progress) {
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

    private func stitchAll(_ messages: [Conversation.Message], voices: [VoiceID?], session: RenderSession, progress: JobProgress,
                           emit: @escaping @Sendable (RenderEvent) -> Void) async throws {
        let count = messages.count
        let processingWindow = options.jobs + 1
        let lookAhead = min(count, max(processingWindow, 2 * chorus.configuration.providerConcurrency + processingWindow))
        let pool = chorus.pool
        let synthesizer = chorus.synthesizer
        let listener = chorus.listener
        let conversation = self.conversation
        let listening = self.listening
        // The conversation's language, when it says one, chooses the model that hears its recorded messages.
        let language = conversation.textReading.language == TextReading.defaultLanguage ? nil : conversation.textReading.primaryLanguage

        try await withThrowingTaskGroup(of: Step.self) { group in
            var sourced: [Int: SourcedMessage] = [:]
            var processed: [Int: ProcessedMessage] = [:]
            var heard: [Int: MessageListener.Heard] = [:]
            var listeningTo = Set<Int>()
            /// Recordings heard together, in groups fixed by the conversation's order.
            let together = listening && listener.hearsTogether
            var groups = ListeningGroups<MessageListener.Speech>(
                voiced: voices.map { $0 != nil }, limitSamples: Int(Self.togetherSeconds) * WhisperRecognizer.sampleRate,
                limitCount: Self.mostTogether)
            var warnedUnheard = false
            var processing = Set<Int>()
            var retried = Set<Int>()
            var nextToSource = 0
            var written = 0
            /// Placed messages waiting for their words; their timeline entries until announced; the next to announce.
            var unheard = Set<Int>()
            var segments: [Int: Timeline.Segment] = [:]
            var announced = 0

            func source(_ index: Int, fresh: Bool) {
                let message = messages[index]
                // The text of the messages either side spoken by the same voice, for providers that carry prosody across.
                let neighbors = MessageSynthesizer.Neighbors(
                    previous: index > 0 && voices[index - 1] == voices[index] ? messages[index - 1].visibleText : nil,
                    next: index + 1 < count && voices[index + 1] == voices[index] ? messages[index + 1].visibleText : nil)
                group.addTask {
                    if let voice = voices[index] {
                        let result = try await synthesizer.synthesize(index: index, message: message, voice: voice, in: conversation,
                                                                      neighbors: neighbors, fresh: fresh, progress: progress)
                        progress.update { $0.synthesized += 1 }
                        return .sourced(index, result)
                    }
                    var recorded = Self.recorded(message)
                    recorded.cleanup = conversation.cleanup(for: message)
                    return .sourced(index, SourcedMessage(message: recorded, cacheKeys: []))
                }
            }

            func launch() {
                while nextToSource < min(count, written + lookAhead) {
                    source(nextToSource, fresh: false)
                    nextToSource += 1
                }
                for index in written..<min(count, written + processingWindow) where !processing.contains(index) {
                    guard let ready = sourced[index] else { continue }
                    processing.insert(index)
                    let processor = session.processor
                    group.addTask {
                        do {
                            return .processed(index, try await pool.run { try processor.process(ready.message, index: index) })
                        } catch let error as AudioError {
                            if !ready.cacheKeys.isEmpty { return .staleCache(index, error) }
                            throw error.about(RenderMessage.subject(index: index, speaker: ready.message.speaker))
                        }
                    }
                }
            }

            /// Why messages could not be heard, until announced (the first in order is warned of).
            var unheardReasons: [Int: String] = [:]

            /// What was heard in message `index` (about to be placed, or placed): its words and the text heard, if any.
            func words(_ result: MessageListener.Heard?, index: Int) -> (words: [WordTiming], text: String?)? {
                switch result {
                case .words(let words, let transcribedText)?:
                    return (words, transcribedText)
                case .unavailable(let reason)?:
                    unheardReasons[index] = reason
                    return nil
                case .nothing?, nil:
                    return nil
                }
            }

            /// Announces the segments that are final (placed, and heard when they are listened to), in order; the first
            /// message that could not be heard says why.
            func announce() {
                while let segment = segments[announced], !unheard.contains(announced) {
                    segments.removeValue(forKey: announced)
                    if let reason = unheardReasons.removeValue(forKey: announced), !warnedUnheard {
                        warnedUnheard = true
                        let warning = "\(RenderMessage.subject(index: announced, speaker: segment.speaker)): no speech recognition "
                            + "(\(reason)); recorded messages, and those of voices that give no word times, keep no words"
                        session.warn(warning)
                        emit(.warning(warning))
                    }
                    emit(.segment(segment))
                    announced += 1
                }
            }

            /// Hears the groups of recordings that are complete.
            func hearGroups() {
                guard together else { return }
                for members in groups.ready() {
                    let batch = members.map { (speech: $0.speech, text: sourced[$0.index]?.message.text ?? messages[$0.index].text) }
                    let indices = members.map(\.index)
                    group.addTask { .heardTogether(Array(zip(indices, try await listener.listen(together: batch, language: language)))) }
                }
            }

            /// What message `index` heard gives it (placed already: its timeline entry; else when it is placed).
            func received(_ index: Int, _ result: MessageListener.Heard) {
                listeningTo.remove(index)
                // Known without hearing (or its speech could not be made), unless it was heard in a group.
                groups.pass(index)
                if unheard.remove(index) != nil {
                    // Already placed: its words go into its timeline entry.
                    if let (words, text) = words(result, index: index) {
                        segments[index] = session.hear(index, words: words, transcribedText: text)
                    }
                } else {
                    heard[index] = result
                }
            }

            launch()
            while let step = try await group.next() {
                switch step {
                case .sourced(let index, let message):
                    sourced[index] = message
                case .processed(let index, let message):
                    processed[index] = message
                    if let source = sourced[index]?.message, listening && (voices[index] == nil || source.words == nil) {
                        listeningTo.insert(index)
                        group.addTask {
                            do {
                                return .speech(index, try await pool.run { try MessageListener.speech(of: message) })
                            } catch {
                                return .heard(index, .unavailable("\(error)"))
                            }
                        }
                    }
                case .speech(let index, let speech):
                    let text = sourced[index]?.message.text ?? messages[index].text
                    if together && voices[index] == nil {
                        // A recording: known (cached) at once, else heard with others. A voice's speech (its text to be
                        // aligned) is heard alone as it comes, a provider's answer at a time.
                        group.addTask {
                            if let known = try await listener.known(speech, text: text, language: language) { return .heard(index, known) }
                            return .toHear(index, speech)
                        }
                    } else {
                        group.addTask { .heard(index, try await listener.listen(to: speech, text: text, language: language)) }
                    }
                case .toHear(let index, let speech):
                    groups.hear(index, speech, samples: speech.samples.count)
                case .heard(let index, let result):
                    received(index, result)
                case .heardTogether(let results):
                    for (index, result) in results { received(index, result) }
                case .staleCache(let index, let error):
                    guard !retried.contains(index), let stale = sourced.removeValue(forKey: index) else {
                        throw error.about(RenderMessage.subject(index: index, speaker: messages[index].speaker))
                    }
                    retried.insert(index)
                    processing.remove(index)
                    stale.cacheKeys.forEach(synthesizer.cache.remove)
                    emit(.warning("\(RenderMessage.subject(index: index, speaker: messages[index].speaker)): a cached clip did not decode (\(error)); synthesizing it again"))
                    source(index, fresh: true)
                }
                while processed[written] != nil, unheard.count < Self.mostUnheard {
                    let ready = processed.removeValue(forKey: written)!
                    var message = sourced.removeValue(forKey: written)!.message
                    if let (words, text) = words(heard.removeValue(forKey: written), index: written) {
                        message.words = words
                        if let text {
                            message.text = text
                            message.transcribed = true
                        }
                    }
                    // Heard later: placed now, its words given when they come.
                    if listeningTo.contains(written) { unheard.insert(written) }
                    let heardMessage = message, placed = ready
                    segments[written] = try await pool.run { try session.append(placed, for: heardMessage) }
                    written += 1
                    for warning in ready.warnings { emit(.warning(warning)) }
                    progress.update { $0.rendered += 1 }
                }
                announce()
                launch()
                hearGroups()
            }
        }
    }

    /// The intro or outro (`role`) sourced and processed like a message: its clip, or its line spoken by `voice`
    /// (from the cache, synthesized again if a cached clip no longer decodes). Errors name it by `role`.
    private func bookend(_ bookend: Conversation.Message?, _ role: String, voice: VoiceID?, session: RenderSession,
                         progress: JobProgress) async throws -> (processed: ProcessedMessage, message: RenderMessage)? {
        guard let bookend else { return nil }
        let processor = session.processor
        var fresh = false
        while true {
            var sourced: SourcedMessage
            if let voice {
                do {
                    sourced = try await chorus.synthesizer.synthesize(index: -1, message: bookend, voice: voice, in: conversation,
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
                sourced.cacheKeys.forEach(chorus.synthesizer.cache.remove)
                fresh = true
            }
        }
    }

    /// A recorded message as render input.
    private static func recorded(_ message: Conversation.Message) -> RenderMessage {
        switch message.audio! {
        case .file(let url, let label):
            return RenderMessage(speaker: message.speaker, source: .file(url), label: label, text: message.visibleText)
        case .data(let data, let label):
            return RenderMessage(speaker: message.speaker, source: .encoded(data), label: label, text: message.visibleText)
        }
    }
}

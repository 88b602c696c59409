import ChorusAudio
import ChorusListening
import ChorusSpeech
import ChorusWire
import Foundation

/// What `RenderPipeline` does with the messages between the intro and the outro, step by step: what it has sourced,
/// processed, placed and heard, and what it starts next (in the render's task group). One render's, one task's.
struct RenderStitching {
    /// A step of a message, as a task of the group ends it.
    enum Step: Sendable {
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

    typealias Group = ThrowingTaskGroup<Step, any Error>

    /// What does not change while the messages are stitched.
    struct Setting: Sendable {
        let chorus: Chorus
        let conversation: Conversation
        let voices: [VoiceID?]
        let session: RenderSession
        let progress: JobProgress
        let emit: @Sendable (RenderEvent) -> Void
        /// Whether messages are heard (`RenderPipeline.listening`), and whether recordings are heard together.
        let listening: Bool
        let together: Bool
        /// Messages processed ahead of the encoder at most, and sourced ahead of it at most.
        let processingWindow: Int
        let lookAhead: Int
        /// The conversation's language, when it says one: it chooses the model that hears its recorded messages.
        let language: String?
        /// The audio is streamed: a listener waits for the first message, which is sourced alone (the others once it
        /// is) and urgently (`SynthesisThreads`), so it is spoken on every core rather than beside the messages after it.
        var streaming = false

        var messages: [Conversation.Message] { conversation.messages }
    }

    let setting: Setting
    private var sourced: [Int: SourcedMessage] = [:]
    private var processed: [Int: ProcessedMessage] = [:]
    private var heard: [Int: MessageListener.Heard] = [:]
    private var listeningTo = Set<Int>()
    /// Recordings heard together, in groups fixed by the conversation's order.
    private var groups: ListeningGroups<MessageListener.Speech>
    private var processing = Set<Int>()
    private var retried = Set<Int>()
    private var nextToSource = 0
    private var written = 0
    /// Placed messages waiting for their words; their timeline entries until announced; the next to announce.
    private var unheard = Set<Int>()
    private var segments: [Int: Timeline.Segment] = [:]
    private var announced = 0
    /// Why messages could not be heard, until announced (the first in order is warned of).
    private var unheardReasons: [Int: String] = [:]
    private var warnedUnheard = false

    init(_ setting: Setting) {
        self.setting = setting
        groups = ListeningGroups(
            voiced: setting.voices.map { voice in
                voice.map { setting.chorus.configuration.registry.providers[$0.provider]?.timesWords ?? true } ?? false
            },
            limitSamples: Int(RenderPipeline.togetherSeconds * Double(WhisperRecognizer.sampleRate)),
            gapSamples: Int(RenderPipeline.togetherGap * Double(WhisperRecognizer.sampleRate)),
            limitCount: RenderPipeline.mostTogether)
    }

    /// Takes what a task ended with, places every message that is ready, announces what is final, and starts what
    /// can start now.
    mutating func advance(_ step: Step, in group: inout Group) async throws {
        try take(step, in: &group)
        try await placeReady()
        announce()
        launch(in: &group)
        hearGroups(in: &group)
    }

    /// Sources message `index`: its clip, or its text from the cache or its provider (`fresh`: not from the cache).
    private func source(_ index: Int, fresh: Bool, in group: inout Group) {
        let messages = setting.messages
        let voices = setting.voices
        let message = messages[index]
        let conversation = setting.conversation
        let synthesizer = setting.chorus.synthesizer
        let progress = setting.progress
        // The text of the messages either side spoken by the same voice, for providers that carry prosody across.
        let neighbors = MessageSynthesizer.Neighbors(
            previous: index > 0 && voices[index - 1] == voices[index] ? messages[index - 1].visibleText : nil,
            next: index + 1 < messages.count && voices[index + 1] == voices[index] ? messages[index + 1].visibleText : nil)
        let voice = voices[index]
        // In a stream, the message the encoder already waits for when it is sourced — the first (or one sourced again)
        // — is urgent: spoken before other speech waiting, on every core (`SynthesisThreads`).
        group.addTask(priority: setting.streaming && index == written ? .high : nil) {
            if let voice {
                let result = try await synthesizer.synthesize(
                    index: index, message: message, voice: voice, in: conversation,
                    neighbors: neighbors, fresh: fresh, progress: progress)
                progress.update { $0.synthesized += 1 }
                return .sourced(index, result)
            }
            var recorded = RenderPipeline.recorded(message)
            recorded.cleanup = conversation.cleanup(for: message)
            return .sourced(index, SourcedMessage(message: recorded, cacheKeys: []))
        }
    }

    /// Sources the messages within `lookAhead` of the encoder, and processes those sourced within `processingWindow`.
    mutating func launch(in group: inout Group) {
        let count = setting.messages.count
        let ahead = setting.streaming && sourced.isEmpty && written == 0 ? 1 : setting.lookAhead
        while nextToSource < min(count, written + ahead) {
            source(nextToSource, fresh: false, in: &group)
            nextToSource += 1
        }
        for index in written..<min(count, written + setting.processingWindow) where !processing.contains(index) {
            guard let ready = sourced[index] else { continue }
            processing.insert(index)
            let processor = setting.session.processor
            let pool = setting.chorus.pool
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

    /// Takes what a task ended with: a message sourced, processed (then its speech made, if it is heard), its speech
    /// ready to hear, heard, or its cached clip stale.
    private mutating func take(_ step: Step, in group: inout Group) throws {
        let listener = setting.chorus.listener
        let pool = setting.chorus.pool
        let language = setting.language
        switch step {
        case .sourced(let index, let message):
            sourced[index] = message
        case .processed(let index, let message):
            processed[index] = message
            guard let source = sourced[index]?.message, setting.listening && (setting.voices[index] == nil || source.words == nil) else {
                groups.pass(index)  // its words came with it (a fallback voice's, say): no group waits for it
                break
            }
            listeningTo.insert(index)
            group.addTask {
                do {
                    return .speech(index, try await pool.run { try MessageListener.speech(of: message) })
                } catch {
                    return .heard(index, .unavailable("\(error)"))
                }
            }
        case .speech(let index, let speech):
            let text = sourced[index]?.message.text ?? setting.messages[index].visibleText
            if setting.together && groups.joins(index) {
                // A recording, or the speech of a voice that gives no word times (its text to be aligned): known
                // (cached) at once, else heard with others. A voice that times its words but gave none (a fallback's)
                // is heard alone.
                let spoken = setting.voices[index] != nil
                group.addTask {
                    if let known = try await listener.known(speech, text: text, spoken: spoken, language: language) { return .heard(index, known) }
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
            let subject = RenderMessage.subject(index: index, speaker: setting.messages[index].speaker)
            guard !retried.contains(index), let stale = sourced.removeValue(forKey: index) else { throw error.about(subject) }
            retried.insert(index)
            processing.remove(index)
            RenderPipeline.discard(stale, subject: subject, error: error, synthesizer: setting.chorus.synthesizer, emit: setting.emit)
            source(index, fresh: true, in: &group)
        }
    }

    /// Places the processed messages that are next in order (with their words when heard already), while fewer than
    /// `RenderPipeline.mostUnheard` placed ones wait for words.
    private mutating func placeReady() async throws {
        while processed[written] != nil, unheard.count < RenderPipeline.mostUnheard {
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
            let heardMessage = message
            let session = setting.session
            segments[written] = try await setting.chorus.pool.run { try session.append(ready, for: heardMessage) }
            written += 1
            for warning in ready.warnings { setting.emit(.warning(warning)) }
            setting.progress.update { $0.rendered += 1 }
        }
    }

    /// What was heard in message `index` (about to be placed, or placed): its words and the text heard, if any.
    private mutating func words(_ result: MessageListener.Heard?, index: Int) -> (words: [WordTiming], text: String?)? {
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
    private mutating func announce() {
        while let segment = segments[announced], !unheard.contains(announced) {
            segments.removeValue(forKey: announced)
            if let reason = unheardReasons.removeValue(forKey: announced), !warnedUnheard {
                warnedUnheard = true
                let warning =
                    "\(RenderMessage.subject(index: announced, speaker: segment.speaker)): no speech recognition "
                    + "(\(reason)); recorded messages, and those of voices that give no word times, keep no words"
                setting.session.warn(warning)
                setting.emit(.warning(warning))
            }
            setting.emit(.segment(segment))
            announced += 1
        }
    }

    /// Hears the groups of recordings that are complete.
    private mutating func hearGroups(in group: inout Group) {
        guard setting.together else { return }
        let listener = setting.chorus.listener
        let language = setting.language
        for members in groups.ready() {
            let batch = members.map {
                (
                    speech: $0.speech, text: sourced[$0.index]?.message.text ?? setting.messages[$0.index].visibleText,
                    spoken: setting.voices[$0.index] != nil
                )
            }
            let indices = members.map(\.index)
            group.addTask { .heardTogether(Array(zip(indices, try await listener.listen(together: batch, language: language)))) }
        }
    }

    /// What message `index` heard gives it (placed already: its timeline entry; else when it is placed).
    private mutating func received(_ index: Int, _ result: MessageListener.Heard) {
        listeningTo.remove(index)
        // Known without hearing (or its speech could not be made), unless it was heard in a group.
        groups.pass(index)
        if unheard.remove(index) != nil {
            // Already placed: its words go into its timeline entry.
            if let (words, text) = words(result, index: index) {
                segments[index] = setting.session.hear(index, words: words, transcribedText: text)
            }
        } else {
            heard[index] = result
        }
    }
}

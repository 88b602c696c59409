public import ChorusAudio
public import ChorusSpeech

/// A render resolved once: the conversation, the voice of every message and of a spoken intro and outro, and the
/// sound and encoding settings with the conversation's loudness preset applied. What a render produces is decided
/// here and nowhere else — the pipeline renders the plan it is given, and the service computes a render's id from the
/// same plan — so a voice installed while a render waits in a queue changes neither.
///
/// ```swift
/// let plan = chorus.plan(conversation)            // voices assigned from what is installed now
/// print(plan.voices.map { $0?.description ?? "recorded" })
/// let result = try await chorus.render(plan, to: RenderOutputs(audio: URL(fileURLWithPath: "chat.mp3"))).result()
/// ```
public struct RenderPlan: Sendable {
    public let conversation: Conversation
    /// Each message's voice, `nil` for a recorded clip (`Chorus.voices(for:)`'s rule).
    public let voices: [VoiceID?]
    /// The voice of a spoken intro and outro (`nil` for a clip or none).
    public let introVoice: VoiceID?
    public let outroVoice: VoiceID?
    /// The settings the render uses: the caller's, with the conversation's `loudnessPreset` applied. (A program may
    /// change what does not shape the audio — which side outputs it wants, such as `waveform` — before it renders.)
    public var options: RenderOptions

    /// A plan of `conversation` with the voices given (one per message) and `options` as they are (a loudness preset
    /// already applied, if any). `Chorus.plan(_:options:)` makes one from the voices installed.
    /// - Throws: `ConversationError` about `voices` when there is not one (or `nil`) per message.
    public init(
        conversation: Conversation, voices: [VoiceID?], introVoice: VoiceID? = nil, outroVoice: VoiceID? = nil, options: RenderOptions
    ) throws {
        guard voices.count == conversation.messages.count else {
            throw ConversationError(
                subject: "voices", reason: "\(voices.count) for \(conversation.messages.count) messages: one (or none) per message")
        }
        self.init(checked: conversation, voices: voices, introVoice: introVoice, outroVoice: outroVoice, options: options)
    }

    /// A plan whose voices are one per message already (`Chorus.plan`'s assignment).
    init(checked conversation: Conversation, voices: [VoiceID?], introVoice: VoiceID?, outroVoice: VoiceID?, options: RenderOptions) {
        self.conversation = conversation
        self.voices = voices
        self.introVoice = introVoice
        self.outroVoice = outroVoice
        self.options = options
    }

    /// Every voice the render may speak with: the messages', the intro's and outro's, and the fallback voice.
    public var allVoices: Set<VoiceID> {
        Set(voices.compactMap { $0 } + [introVoice, outroVoice, conversation.fallbackVoice].compactMap { $0 })
    }
}

import ChorusAudio
import ChorusConversation

/// A validated render request: its plan (the conversation, every voice, the settings: resolved once, here), how it is
/// encoded, and its id (computed from the same plan).
struct ResolvedRender: Sendable {
    var id: String
    var plan: RenderPlan
    var format: OutputFileFormat

    var conversation: Conversation { plan.conversation }
}

import ChorusAudio
import ChorusVoices

/// A validated render request: the conversation as the engine takes it, how it is encoded, and its id.
struct ResolvedRender: Sendable {
    var id: String
    var conversation: Conversation
    var options: RenderOptions
    var format: OutputFileFormat
}

import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import ChorusConversation
import Foundation

struct RenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a conversation JSON file into one audio file.",
        discussion: """
            Messages with "audio" are decoded; messages with only "text" are synthesized (espeak-ng offline by \
            default; ElevenLabs or OpenAI when the conversation names their voices and ELEVENLABS_API_KEY / \
            OPENAI_API_KEY are set) and cached. Each message is trimmed of edge silence, normalized to the target \
            loudness (EBU R128, true peak ≤ -1 dBTP) and faded; messages are joined with exact gaps of silence and \
            encoded once, while later messages are still being synthesized. The output format follows the \
            extension: .mp3 .wav .flac .aiff .m4a .ogg

            Example:
              chorus render samples/family-chat.json -o family-chat.mp3 --timeline family-chat.timeline.json
            """)

    @Argument(help: "The conversation JSON file.")
    var conversation: String

    @OptionGroup var render: RenderArguments
    @OptionGroup(title: "Voices") var voices: VoiceArguments

    func run() async throws {
        try await reportingErrors {
            let conversation = try Conversation.load(from: URL(fileURLWithPath: self.conversation))
            try await render.render(conversation, voices: voices)
        }
    }
}

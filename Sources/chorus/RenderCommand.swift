import ArgumentParser
import ChorusAudio
import ChorusVoices
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
            encoded once. The output format follows the extension: .mp3 .wav .flac .aiff .m4a .ogg

            Example:
              chorus render samples/family-chat.json -o family-chat.mp3 --timeline family-chat.json.timeline
            """)

    @Argument(help: "The conversation JSON file.")
    var conversation: String

    @OptionGroup var render: RenderArguments
    @OptionGroup(title: "Voices") var voices: VoiceArguments

    func run() async throws {
        try await reportingErrors {
            let conversation = try Conversation.load(from: URL(fileURLWithPath: self.conversation))
            var synthesis: SynthesisProgress?
            let messages: [RenderMessage]
            if conversation.messages.allSatisfy({ $0.audio != nil }) {
                messages = try conversation.recordedMessages()
            } else {
                let synthesizer = try voices.synthesizer()
                let showProgress = !render.quiet && Terminal.isInteractive
                messages = try await synthesizer.renderMessages(for: conversation, progress: showProgress ? Self.showProgress : nil)
                if showProgress { Terminal.endStatus() }
                synthesis = await synthesizer.statistics
            }
            try await render.render(messages, gapMilliseconds: conversation.gapMilliseconds, synthesis: synthesis)
        }
    }

    @Sendable static func showProgress(_ progress: SynthesisProgress) {
        var line = "Voices: \(progress.completed)/\(progress.total) messages, \(progress.cacheHits) from cache"
        if progress.retries > 0 { line += ", \(progress.retries) retr\(progress.retries == 1 ? "y" : "ies")" }
        if progress.fallbacks > 0 { line += ", \(progress.fallbacks) fallback" }
        Terminal.status(line)
    }
}

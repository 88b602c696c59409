import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import ChorusConversation
import ChorusSpeech
import Foundation

struct VoicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voices",
        abstract: "List the voices of the TTS providers; make Kokoro voices from recordings (create), remove them (remove).",
        subcommands: [VoicesListCommand.self, VoicesCreateCommand.self, VoicesRemoveCommand.self],
        defaultSubcommand: VoicesListCommand.self)
}

struct VoicesListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the voices of the TTS providers (piper, kokoro, flite, espeak, elevenlabs, openai).",
        discussion: """
            ElevenLabs needs ELEVENLABS_API_KEY to list voices; without it, and without --provider, it is skipped \
            with a note. The full list ends with the default voices speakers without a voice get, in the order they \
            are tried (the natural Kokoro and Piper voices installed first, then Flite's and espeak-ng's); each speaker \
            gets the first free one that sounds as the conversation or the speaker's name says, so that every speaker \
            sounds different.

            Example:
              chorus voices --provider espeak
            """)

    @Option(help: "Only this provider: piper, kokoro, flite, espeak, elevenlabs, openai, or one named in the CHORUS_PROVIDERS file.")
    var provider: String?

    @Flag(help: "Print JSON: [{\"id\", \"provider\", \"name\", \"details\"}].")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let registry = VoiceRegistry.standard()
            if let error = registry.configurationError { throw error }
            let ids: [String]
            if let provider {
                guard registry.providers[provider.lowercased()] != nil else {
                    throw ValidationError("--provider \(provider): use one of \(registry.ids.joined(separator: ", "))")
                }
                ids = [provider.lowercased()]
            } else {
                ids = registry.ids
            }
            var voices: [VoiceInfo] = []
            for id in ids {
                do {
                    voices += try await registry.providers[id]!.voices()
                } catch let error as VoiceError where provider == nil {
                    Terminal.warning("skipping \(error)")
                }
            }
            if json {
                let objects = voices.map { voice -> [String: String] in
                    ["id": voice.id.description, "provider": voice.id.provider, "name": voice.name, "details": voice.details]
                }
                let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            } else {
                let width = min(48, voices.map(\.id.description.count).max() ?? 0)
                for voice in voices {
                    let details = voice.details.isEmpty ? "" : "  (\(voice.details))"
                    print(
                        voice.id.description.padding(toLength: max(width, voice.id.description.count), withPad: " ", startingAt: 0)
                            + "  \(voice.name)\(details)")
                }
                if provider == nil {
                    let defaults = DefaultVoices.natural.voices(in: registry).map(\.description)
                    print(
                        "\nSpeakers without a voice get the first free one of these that fits them, tried in this order (--default-voices natural, the default): "
                            + defaults.joined(separator: ", ")
                            + ". Natural voices first; a speaker gets one that sounds as the conversation's \"speakers\" or the speaker's name"
                            + " (Mom, Dad) says, others alternate female and male; one voice is never given to two speakers while another is"
                            + " left, so speakers stay distinct.")
                }
            }
        }
    }
}

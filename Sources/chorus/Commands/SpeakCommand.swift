import ArgumentParser
import ChorusAudio
import ChorusCommandLine
import ChorusConversation
import ChorusSpeech
import ChorusText
import Foundation

struct SpeakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speak",
        abstract: "Synthesize one message with a voice and write it as an audio file (cached like renders).",
        discussion: """
            Example:
              chorus speak "Dinner at seven, everyone." --voice espeak:en-us+f3 -o dinner.mp3 --timeline dinner.json
              chorus speak "Ask Siobhan." --voice piper:en_US-joe-medium --lexicon family.json -o ask.mp3
            """)

    @Argument(help: "The text to speak.")
    var text: String

    @Option(help: "Voice id, provider:voice (e.g. espeak:en-gb, elevenlabs:JBFqnCBsd6RMkjVDRZzb, openai:nova).")
    var voice: String

    @Option(help: "Speaker name for the timeline and captions.")
    var speaker = "Speaker"

    @Option(
        help: ArgumentHelp(
            "A JSON file of pronunciations, as a conversation's \"lexicon\".",
            discussion: #"{"Nguyen": "win", "Siobhan": {"ipa": "ʃɪˈvɔːn", "alias": "shiv awn"}}"#, valueName: "file"))
    var lexicon: String?

    @Option(help: "The language the text is written in (en, en-GB, de): it chooses how numbers and references are read.")
    var language: String?

    @Option(help: "Emoji between words: drop (the default) or name.")
    var emoji: String?

    @OptionGroup var render: RenderArguments
    @OptionGroup(title: "Voices") var voices: VoiceArguments

    func validate() throws {
        if VoiceID(voice) == nil { throw ValidationError("--voice \(voice): use provider:voice, e.g. espeak:en-us") }
        if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { throw ValidationError("the text is empty") }
    }

    func run() async throws {
        try await reportingErrors {
            let message = Conversation.Message(speaker: speaker, text: text, voice: VoiceID(voice))
            var conversation = Conversation(messages: [message], name: "speak")
            conversation.textReading = try TextReading.validated(language: language, emoji: emoji)
            if let lexicon { conversation.lexicon = try Lexicon(file: URL(fileURLWithPath: lexicon)) }
            try await render.render(conversation, voices: voices)
        }
    }
}

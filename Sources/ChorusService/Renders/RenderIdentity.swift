import ChorusAudio
import ChorusConversation
import ChorusOutbound
import ChorusSpeech
import ChorusSupport
import ChorusText
import ChorusWire
import Crypto
import Foundation

/// A render's id: the SHA-256 (first 128 bits, hex) of a canonical description of everything that
/// shapes its output — each message's speaker, text, clip bytes (by hash) and resolved voice, the
/// settings of the providers it uses, the gap, the format, every setting that shapes the output
/// (`RenderOptions.identity(for:)`, which owns that list), the fallback voice, the transcription model that gives
/// recorded messages their words, and the engine format version. The same request gets the same id, so it is rendered once.
/// `RenderIdentityFieldTests` holds this list to the request: every field of `RenderRequest` (a new one included) must
/// be set by its samples, and changing any value of them must change the id.
enum RenderIdentity {
    static let length = 32
    /// Bumped when the engine's output for the same input changes, or the description changes shape (3: every
    /// setting of `RenderOptions.identity`, where 2 had a list of its own that missed MP3 quality, fades, the
    /// true-peak ceiling and the trimmer; 4: recorded messages get words, and the transcription model is part of it;
    /// 5: the offline voices' text is normalized before synthesis, a voice's consecutive messages carry context;
    /// 6: emoji joiners and variation selectors are no words in the timeline, IPA pronunciations reach the engines;
    /// 7: a conversation's language is the phonemes' language for Kokoro's voices, and voices' notes are warnings).
    static let engineVersion = 7

    /// - Parameters:
    ///   - plan: the render as it will run: conversation, voices, settings.
    ///   - clipHashes: each message's clip's hash (`nil` for a spoken one); `bookendClips` the intro's and outro's.
    ///   - transcription: the model that hears the recorded messages (`nil`: none is heard).
    static func id(
        plan: RenderPlan, clipHashes: [String?], format: OutputFileFormat, transcription: String?,
        bookendClips: (intro: String?, outro: String?) = (nil, nil), musicClip: String? = nil
    ) -> String {
        let conversation = plan.conversation
        let voices = plan.voices
        let options = plan.options
        let fallbackVoice = conversation.fallbackVoice
        let bookends = (voices: (intro: plan.introVoice, outro: plan.outroVoice), introClip: bookendClips.intro, outroClip: bookendClips.outro)
        let messages: [JSONValue] = conversation.messages.indices.map { index in
            let message = conversation.messages[index]
            var entry: [String: JSONValue] = [
                "speaker": .string(message.speaker), "text": message.text.map(JSONValue.string) ?? .null,
                "audio": clipHashes[index].map(JSONValue.string) ?? .null, "voice": voices[index].map { .string($0.description) } ?? .null,
            ]
            // Only when given, so the ids of renders without it stay what they were.
            if let gap = message.gapMilliseconds { entry["gap_ms"] = .number(Double(gap)) }
            if let cleanup = conversation.cleanup(for: message) { entry["cleanup"] = RenderIdentity.description(of: cleanup) }
            return .object(entry)
        }
        var providers = Set((voices + [bookends.voices.intro, bookends.voices.outro]).compactMap { $0?.provider })
        if let fallbackVoice { providers.insert(fallbackVoice.provider) }
        let settings = JSONValue.object(
            Dictionary(
                uniqueKeysWithValues: providers.sorted().map {
                    ($0, JSONValue.object(conversation.settings(for: $0)))
                }))
        func bookend(_ message: Conversation.Message?, voice: VoiceID?, clip: String?) -> JSONValue? {
            message.map {
                .object([
                    "speaker": .string($0.speaker), "text": $0.text.map(JSONValue.string) ?? .null,
                    "audio": clip.map(JSONValue.string) ?? .null, "voice": voice.map { .string($0.description) } ?? .null,
                ])
            }
        }
        var description: [String: JSONValue] = [
            "engine": .number(Double(engineVersion)), "gap_ms": .number(Double(conversation.gapMilliseconds)),
            "messages": .array(messages), "voice_settings": settings, "format": .string(format.rawValue),
            "options": .object(options.identity(for: format)), "fallback_voice": fallbackVoice.map { .string($0.description) } ?? .null,
            "transcription": transcription.map(JSONValue.string) ?? .null,
        ]
        // Only when there is one, so the ids of renders without them stay what they were.
        if let intro = bookend(conversation.intro, voice: bookends.voices.intro, clip: bookends.introClip) { description["intro"] = intro }
        if let outro = bookend(conversation.outro, voice: bookends.voices.outro, clip: bookends.outroClip) { description["outro"] = outro }
        if !conversation.textNormalization.isEmpty {
            description["normalize_text"] = .object(conversation.textNormalization.mapValues(JSONValue.bool))
        }
        if conversation.textReading != TextReading() {
            description["reading"] = .object([
                "language": .string(conversation.textReading.language), "emoji": .string(conversation.textReading.emoji.rawValue),
            ])
        }
        if let lexicon = conversation.lexicon {
            description["lexicon"] = .object(lexicon.json)
        }
        if let music = conversation.music {
            description["music"] = .object([
                "audio": musicClip.map(JSONValue.string) ?? .null, "level_lu": .number(music.levelLU), "duck_db": .number(music.duckDB),
                "fade_in_ms": .number(Double(music.fadeInMilliseconds)), "fade_out_ms": .number(Double(music.fadeOutMilliseconds)),
                "loop": .bool(music.loop),
            ])
        }
        let digest = SHA256.hash(data: Data(JSONValue.object(description).canonicalText.utf8))
        return Hex.string(digest.prefix(length / 2))
    }

    /// Every setting of a clean-up, for the id.
    static func description(of cleanup: VoiceCleanup) -> JSONValue {
        .object([
            "highpass_hz": .number(Double(cleanup.highpassHz)), "noise_reduction_db": .number(cleanup.noiseReductionDB),
            "declick": .bool(cleanup.declick), "level": .bool(cleanup.level),
            "max_silence_ms": cleanup.maxSilenceMilliseconds.map { .number(Double($0)) } ?? .null,
        ])
    }
}

import ChorusAudio
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusConversation
@testable import ChorusSpeech

/// Which default voice a speaker without one gets: what the conversation or the speaker's name says they sound like,
/// alternation for the others, natural voices while they last, never one voice for two speakers while another is left.
@Suite("Default voices by what speakers sound like")
struct VoiceAssignmentTests {
    /// A default list shaped as set-up's: Kokoro's voices, Piper's, a blend, then Flite's and espeak-ng's.
    static let defaults = [
        "kokoro:jf_alpha", "kokoro:jm_kumo", "kokoro:jf_nezumi", "piper:en_US-joe-medium", "kokoro:jf_alpha+jf_nezumi", "flite:slt?rate=1.08",
        "flite:rms", "espeak:en-us+m3?pitch=38&rate=165", "espeak:en-us+f3?pitch=72&rate=172",
    ].map { VoiceID($0)! }

    func parse(_ json: String) throws -> Conversation {
        try Conversation.parse(Data(json.utf8), baseDirectory: URL(fileURLWithPath: "/clips"), name: "c.json")
    }

    func voices(_ json: String, defaults: [VoiceID] = defaults) throws -> [String] {
        VoiceAssignment.voices(for: try parse(json), defaults: defaults).map { $0?.description ?? "-" }
    }

    func messages(_ speakers: String...) -> String {
        speakers.map { #"{"speaker": "\#($0)", "text": "Hello."}"# }.joined(separator: ", ")
    }

    @Test("what a voice sounds like comes from its provider's knowledge of it; blends by their larger part")
    func voiceSounds() {
        let expected: [String: VoiceSound?] = [
            "kokoro:af_bella": .female, "kokoro:bm_george?speed=1.2": .male, "kokoro:jf_alpha(1)+jm_kumo(3)": .male,
            "kokoro:jf_alpha+jm_kumo": nil, "kokoro:custom": nil, "piper:en_US-joe-medium": .male, "piper:en_GB-alba-medium": .female,
            "piper:mine": nil, "flite:slt?rate=1.08": .female, "flite:kal16?pitch=1.2": .male, "espeak:en-us+f3?pitch=72": .female,
            "espeak:en+m1": .male, "espeak:en-us": nil, "espeak:en-us+fast": nil, "openai:nova": nil,
        ]
        for (voice, sounds) in expected { #expect(VoiceSound.of(VoiceID(voice)!) == sounds, "\(voice)") }
        let names: [String: VoiceSound?] = [
            "Mom": .female, "Grandma": .female, "Aunt Sue": .female, "Mrs. Lee": .female, "Dad": .male, "Uncle Bob": .male,
            "grandpa joe": .male, "Mom and Dad": nil, "Momo": nil, "Sam": nil, "Billie Jean King": nil, "Maya": .female,
            "Sarah": .female, "Aisha": .female, "emma": .female, "Marcus": .male, "Ben": .male, "Marcus and Emma": .male, "Ari": nil,
        ]
        for (name, sounds) in names { #expect(VoiceSound(speakerName: name) == sounds, "\(name)") }
    }

    @Test("the sample's family: names and a hint give each a voice that sounds as they do, all natural")
    func family() throws {
        let chat = try voices(#"{"speakers": {"Maya": {"sounds": "female"}}, "messages": [\#(messages("Dad", "Mom", "Grandma", "Maya", "Mom"))]}"#)
        #expect(chat == ["kokoro:jm_kumo", "kokoro:jf_alpha", "kokoro:jf_nezumi", "kokoro:jf_alpha+jf_nezumi", "kokoro:jf_alpha"])
        // A hint wins over the name; a hint for a speaker who is not there changes nothing.
        let hinted = try voices(#"{"speakers": {"Mom": {"sounds": "male"}, "Zed": {"sounds": "male"}}, "messages": [\#(messages("Mom", "Dad"))]}"#)
        #expect(hinted == ["kokoro:jm_kumo", "piper:en_US-joe-medium"])
    }

    @Test("first names say what speakers sound like: each gets a natural voice of that sex while one is free, none crosses over first")
    func firstNames() throws {
        #expect(
            try voices(#"{"messages": [\#(messages("Sarah", "Marcus", "Aisha", "Emma"))]}"#) == [
                "kokoro:jf_alpha", "kokoro:jm_kumo", "kokoro:jf_nezumi", "kokoro:jf_alpha+jf_nezumi",
            ])
    }

    @Test("speakers without a hint alternate, female first; a natural voice of the other sound before a robotic one")
    func alternation() throws {
        #expect(
            try voices(#"{"messages": [\#(messages("Ari", "Blair", "Cam", "Dale", "Ari"))]}"#) == [
                "kokoro:jf_alpha", "kokoro:jm_kumo", "kokoro:jf_nezumi", "piper:en_US-joe-medium", "kokoro:jf_alpha",
            ])
        // Dad takes the one natural male voice: Blair, who would be given one, gets a free natural voice instead.
        let small = ["kokoro:jf_alpha", "kokoro:jf_nezumi", "kokoro:jm_kumo", "flite:rms"].map { VoiceID($0)! }
        #expect(
            try voices(#"{"messages": [\#(messages("Dad", "Ari", "Blair"))]}"#, defaults: small) == [
                "kokoro:jm_kumo", "kokoro:jf_alpha", "kokoro:jf_nezumi",
            ])
        // A hinted speaker keeps the sound they asked for over a natural voice: Flite's male voice.
        #expect(
            try voices(#"{"speakers": {"Sam": {"sounds": "male"}}, "messages": [\#(messages("Dad", "Sam"))]}"#, defaults: small) == [
                "kokoro:jm_kumo", "flite:rms",
            ])
    }

    @Test("voices the conversation names are never given to others; past the defaults, speakers share by sound")
    func takenAndShared() throws {
        let named = try voices(#"{"voices": {"Eden": "kokoro:jf_alpha"}, "messages": [\#(messages("Ari", "Eden", "Dad"))]}"#)
        #expect(named == ["kokoro:jf_nezumi", "kokoro:jf_alpha", "kokoro:jm_kumo"])
        let two = ["kokoro:jf_alpha", "kokoro:jm_kumo"].map { VoiceID($0)! }
        #expect(
            try voices(#"{"messages": [\#(messages("Mom", "Dad", "Aunt May", "Uncle Al", "Sis"))]}"#, defaults: two) == [
                "kokoro:jf_alpha", "kokoro:jm_kumo", "kokoro:jf_alpha", "kokoro:jm_kumo", "kokoro:jf_alpha",
            ])
        // A voice named with settings takes the voice: Ari does not get kokoro:jf_alpha at another speed.
        #expect(
            try voices(#"{"voices": {"Eden": "kokoro:jf_alpha?speed=1.1"}, "messages": [\#(messages("Eden", "Ari"))]}"#) == [
                "kokoro:jf_alpha?speed=1.1", "kokoro:jf_nezumi",
            ])
    }

    @Test("a spoken intro's speaker appears first; a recorded message gets no voice; a hint on a speaker with a voice is not counted")
    func order() throws {
        let chat = try voices(
            #"""
            {"intro": {"speaker": "Host", "text": "Welcome."}, "outro": {"audio": "bye.wav"},
             "speakers": {"Eden": {"sounds": "male"}}, "voices": {"Eden": "flite:slt"},
             "messages": [{"speaker": "Rec", "audio": "r.wav"}, \#(messages("Eden", "Rec", "Ari"))]}
            """#)
        // Host is the first speaker without a hint (female), Rec the second (male: its recorded message had no voice),
        // Ari the third (female); Eden keeps her voice and does not move the alternation.
        #expect(chat == ["kokoro:jf_alpha", "-", "flite:slt", "kokoro:jm_kumo", "kokoro:jf_nezumi", "-"])
    }

    @Test("a hint that is not female or male is refused, naming the speaker")
    func badHint() throws {
        let error = #expect(throws: ConversationError.self) {
            try parse(#"{"speakers": {"Mom": {"sounds": "robot"}}, "messages": [\#(messages("Mom"))]}"#)
        }
        #expect(error?.description.contains(#"speakers.Mom.sounds: "robot" is not "female" or "male""#) == true, "\(String(describing: error))")
        let notObject = #expect(throws: ConversationError.self) { try parse(#"{"speakers": {"Mom": "female"}, "messages": [\#(messages("Mom"))]}"#) }
        #expect(notObject?.description.contains("speakers.Mom: must be an object") == true, "\(String(describing: notObject))")
        let misspelt = #expect(throws: ConversationError.self) {
            try parse(#"{"speakers": {"Mom": {"sound": "female"}}, "messages": [\#(messages("Mom"))]}"#)
        }
        #expect(misspelt?.description.contains("speakers.Mom.sound: unknown field (known: sounds)") == true, "\(String(describing: misspelt))")
    }
}

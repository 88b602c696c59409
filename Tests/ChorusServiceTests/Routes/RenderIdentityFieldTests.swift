import ChorusAudio
import ChorusConversation
import ChorusFixtures
import ChorusWire
import Foundation
import Testing

@testable import ChorusService

/// The render id is listed by hand (`RenderIdentity`); this holds it to the request: every field of `RenderRequest`
/// is set in one of the sample requests (a field added to the request and not here fails), and changing any value of
/// them gives another id. A field left out of the id (the id then says two different renders are one, and the second
/// is served the first's audio) fails here.
@Suite("the render id and the request's fields")
struct RenderIdentityFieldTests {
    /// Fields no sample sets, and why.
    static let unset: [String: String] = [
        "Message.audio": "a server path: always refused", "Bookend.audio": "a server path: always refused",
        "Music.audio": "a server path: always refused",
    ]

    /// Values a field is changed to where adding 1, flipping or appending a letter would be refused (by path, with
    /// `[]` for any index).
    static let alternatives: [String: JSONValue] = [
        "messages[].voice": .string("espeak:en-us+f2"), "intro.voice": .string("flite:awb"), "voices.Gran": .string("espeak:en-us+m3"),
        "output.format": .string("wav"), "output.sample_rate": .number(22_050), "output.channels": .number(1),
        "output.bitrate": .number(96_000), "output.fallback_voice": .string("flite:awb"), "loudness_preset": .string("broadcast"),
        "language": .string("de"), "emoji": .string("drop"), "voice_settings.openai.speed": .number(1.5),
        "speakers.Mom.sounds": .string("female"),
    ]

    static func samples(clips: [String], inline: [String]) -> [String] {
        [
            #"""
            {"messages": [{"speaker": "Mom", "text": "Dinner at seven.", "voice": "flite:slt", "gap_ms": 400},
                          {"speaker": "Dad", "clip": "\#(clips[0])", "cleanup": false, "gap_ms": -200},
                          {"speaker": "Kid", "audio_base64": "\#(inline[0])"},
                          {"speaker": "Gran", "text": "Hello, all of you."},
                          {"speaker": "Ana", "text": "Me too.", "voice": "openai:nova"}],
             "intro": {"speaker": "Host", "text": "Welcome.", "voice": "espeak:en-us"},
             "outro": {"clip": "\#(clips[1])"},
             "voices": {"Gran": "espeak:en-us+f3"}, "voice_settings": {"openai": {"speed": 1.2}}, "gap_ms": 300,
             "output": {"format": "mp3", "sample_rate": 44100, "channels": 2, "bitrate": 128000, "loudness": -18,
                        "normalize": true, "trim": false, "chapters": false, "fallback_voice": "espeak:en-us"},
             "transcribe": false,
             "music": {"clip": "\#(clips[2])", "level_lu": -20, "duck_db": 12, "fade_in_ms": 500, "fade_out_ms": 800, "loop": true},
             "cleanup": {"highpass_hz": 100, "noise_reduction_db": 10, "declick": true, "level": true, "max_silence_ms": 800},
             "normalize_text": {"openai": true, "espeak": false}, "lexicon": {"Nguyen": "win"}, "language": "en-gb", "emoji": "name"}
            """#,
            #"""
            {"messages": [{"speaker": "Mom", "text": "Dinner at seven."}, {"speaker": "Dad", "clip": "\#(clips[3])"}],
             "intro": {"audio_base64": "\#(inline[1])"}, "loudness_preset": "podcast", "normalize_text": true, "cleanup": true,
             "speakers": {"Mom": {"sounds": "male"}},
             "music": {"audio_base64": "\#(inline[2])"}}
            """#,
        ]
    }

    @Test("every field of a render request is set by a sample, and changing any of its values changes the render id")
    func everyFieldShapesTheId() async throws {
        let service = try TestService { $0.transcriptionModel = "whisper-tiny.en" }  // (not loaded: the resolver names it)
        let server = try await service.server()
        func wav(_ frequency: Double) throws -> Data {
            try ClipEncoding.wav16.data(
                SignalGenerator.tone(frequency: frequency, amplitude: 0.3, seconds: 0.5, format: AudioFormat(sampleRate: 16_000, channels: 1)))
        }
        var clips: [String] = []
        for frequency in [300.0, 400, 500, 600] { clips.append(try await server.state.clips.add(try wav(frequency)).info.id) }
        let inline = try [700.0, 800, 900, 1_000].map { try wav($0).base64EncodedString() }

        // Every field is set somewhere (by type and name, over every instance of the type in the samples).
        var set = Set<String>()
        var all = Set<String>()
        let samples = try Self.samples(clips: clips, inline: inline).map { try JSONDecoder().decode(RenderRequest.self, from: Data($0.utf8)) }
        for sample in samples { Self.walk(sample, set: &set, all: &all) }
        #expect(
            all.count >= 50 && all.contains("OutputSettings.bitrate") && all.contains("Settings.declick"),
            "the walk missed the request's types: \(all.sorted())")
        for field in all.subtracting(set).sorted() where Self.unset[field] == nil {
            Issue.record("no sample sets \(field): add it to a sample (or to `unset`, saying why)")
        }

        // Every value changed: another id.
        var changes = 0
        for (index, text) in Self.samples(clips: clips, inline: inline).enumerated() {
            let json = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            let id = try await server.state.resolver.resolve(try Self.request(json)).id
            for path in Self.leaves(of: json) {
                let changed = try Self.changing(json, at: path, clips: clips, inline: inline)
                do {
                    let other = try await server.state.resolver.resolve(try Self.request(changed)).id
                    changes += 1
                    #expect(other != id, "sample \(index): changing \(Self.name(path)) leaves the render id as it was")
                } catch {
                    Issue.record("sample \(index): changing \(Self.name(path)) is refused (\(error)); give it a value in `alternatives`")
                }
            }
        }
        #expect(changes >= 50, "\(changes) values changed")
    }

    /// A path in a JSON value: object keys and array indexes.
    enum Step: Equatable {
        case key(String)
        case index(Int)
    }

    static func name(_ path: [Step]) -> String {
        path.enumerated().map { offset, step in
            switch step {
            case .key(let key): return offset == 0 ? key : ".\(key)"
            case .index: return "[]"
            }
        }.joined()
    }

    static func request(_ json: JSONValue) throws -> RenderRequest {
        try JSONDecoder().decode(RenderRequest.self, from: JSONEncoder().encode(json))
    }

    /// The paths of every number, string and boolean in `json`.
    static func leaves(of json: JSONValue, at path: [Step] = []) -> [[Step]] {
        switch json {
        case .object(let entries): return entries.keys.sorted().flatMap { leaves(of: entries[$0]!, at: path + [.key($0)]) }
        case .array(let items): return items.indices.flatMap { leaves(of: items[$0], at: path + [.index($0)]) }
        case .null: return []
        default: return [path]
        }
    }

    /// `json` with the value at `path` changed: to its alternative, another clip or inline audio, a flipped boolean, a
    /// number one more (a tenth more for a fraction), a string with a letter more.
    static func changing(_ json: JSONValue, at path: [Step], clips: [String], inline: [String]) throws -> JSONValue {
        func changed(_ value: JSONValue) -> JSONValue {
            if let alternative = alternatives[name(path)] { return alternative }
            switch value {
            case .bool(let flag): return .bool(!flag)
            case .number(let number): return .number(number == number.rounded() ? number + 1 : number + 0.1)
            case .string(let text):
                if let clip = clips.firstIndex(of: text) { return .string(clips[(clip + 1) % clips.count]) }
                if let audio = inline.firstIndex(of: text) { return .string(inline[(audio + 1) % inline.count]) }
                return .string(text + "x")
            default: return value
            }
        }
        func replacing(_ value: JSONValue, _ rest: ArraySlice<Step>) -> JSONValue {
            guard let step = rest.first else { return changed(value) }
            switch (value, step) {
            case (.object(var entries), .key(let key)):
                entries[key] = replacing(entries[key] ?? .null, rest.dropFirst())
                return .object(entries)
            case (.array(var items), .index(let index)):
                items[index] = replacing(items[index], rest.dropFirst())
                return .array(items)
            default:
                return value
            }
        }
        return replacing(json, path[...])
    }
}

extension RenderIdentityFieldTests {
    /// Every stored property of the request's own types (by `Type.name`) into `all`, and those set into `set`.
    static func walk(_ value: Any, set: inout Set<String>, all: inout Set<String>) {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .collection?:
            for child in mirror.children { walk(child.value, set: &set, all: &all) }
        case .enum? where String(reflecting: type(of: value)).hasPrefix("ChorusWire."):  // one of its forms (`Cleanup.settings`)
            for child in mirror.children { walk(child.value, set: &set, all: &all) }
        case .struct? where String(reflecting: type(of: value)).hasPrefix("ChorusWire."):
            let typeName = String(describing: type(of: value))
            for child in mirror.children {
                guard let label = child.label else { continue }
                let field = "\(typeName).\(label)"
                all.insert(field)
                let inner = Mirror(reflecting: child.value)
                if inner.displayStyle == .optional {
                    guard let wrapped = inner.children.first?.value else { continue }
                    set.insert(field)
                    walk(wrapped, set: &set, all: &all)
                } else {
                    set.insert(field)
                    walk(child.value, set: &set, all: &all)
                }
            }
        default:
            break
        }
    }
}

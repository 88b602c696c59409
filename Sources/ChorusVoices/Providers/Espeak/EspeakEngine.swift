import CEspeakNG
import ChorusAudio
import Foundation

/// The process's one espeak-ng instance. espeak-ng keeps global state (voice, parameters, the callback), so every
/// use runs on one dedicated thread (never Swift's cooperative pool: a synthesis is CPU work of up to a second, and
/// a cooperative thread it held would stall every task of the process meanwhile — the service's requests among
/// them); the callback is registered once, there.
final class EspeakEngine: Sendable {
    static let shared = EspeakEngine()

    private let thread = WorkerPool(threads: 1, name: "espeak")
    private let library = Library()

    /// Installed espeak-ng voices as (identifier, name, languages).
    func installedVoices() async throws -> [(identifier: String, name: String, language: String, gender: Int)] {
        let library = self.library
        return try await thread.run { try library.installedVoices() }
    }

    /// The identifier of the voice espeak-ng is using (for tests: did the variant apply?).
    func currentVoiceIdentifier(for name: String) async throws -> String {
        let library = self.library
        return try await thread.run { try library.currentVoiceIdentifier(for: name) }
    }

    /// Speaks `text` with `voice`.
    func speak(_ text: String, voice: EspeakVoice) async throws -> Output {
        let library = self.library
        return try await thread.run { try library.speak(text, voice: voice) }
    }

    /// What one synthesis produced: 16-bit samples at `rate`, word events and clause ends (ms).
    struct Output: Sendable {
        var rate: Int
        var samples: [Int16]
        var words: [Word]
        var clauseEnds: [Int]
    }

    struct Word: Sendable {
        var position: Int
        var length: Int
        var milliseconds: Int
    }
}

/// espeak-ng itself: its state (started or not, at which rate) is only touched on the engine's one thread.
private final class Library: @unchecked Sendable {
    private var sampleRate: Int?

    /// What one synthesis collects from the callback.
    final class Collector {
        var samples: [Int16] = []
        var words: [(position: Int, length: Int, milliseconds: Int)] = []
        var clauseEnds: [Int] = []
    }

    private func start() throws -> Int {
        if let sampleRate { return sampleRate }
        let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nil, 0)
        guard rate > 0 else {
            throw VoiceError(.configuration, provider: "espeak",
                             message: "espeak-ng could not start (is espeak-ng-data installed? run scripts/setup.sh)")
        }
        espeak_SetSynthCallback { wave, count, events in
            guard let events else { return 0 }
            guard let context = events.pointee.user_data else { return 0 }
            let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
            if let wave, count > 0 { collector.samples.append(contentsOf: UnsafeBufferPointer(start: wave, count: Int(count))) }
            var event = events
            while event.pointee.type != espeakEVENT_LIST_TERMINATED {
                switch event.pointee.type {
                case espeakEVENT_WORD:
                    collector.words.append((Int(event.pointee.text_position), Int(event.pointee.length), Int(event.pointee.audio_position)))
                case espeakEVENT_END, espeakEVENT_MSG_TERMINATED:
                    collector.clauseEnds.append(Int(event.pointee.audio_position))
                default: break
                }
                event += 1
            }
            return 0
        }
        sampleRate = Int(rate)
        return Int(rate)
    }

    /// The one place espeak-ng's status codes become errors.
    static func check(_ status: espeak_ERROR, _ operation: String) throws {
        guard status != EE_OK else { return }
        throw VoiceError(.unavailable, provider: "espeak", message: "espeak-ng: \(operation) failed (status \(status.rawValue))")
    }

    func installedVoices() throws -> [(identifier: String, name: String, language: String, gender: Int)] {
        _ = try start()
        guard let list = espeak_ListVoices(nil) else { return [] }
        var result: [(String, String, String, Int)] = []
        var index = 0
        while let voice = list[index] {
            let languages = voice.pointee.languages.map { String(cString: $0 + 1) } ?? ""
            result.append((String(cString: voice.pointee.identifier), String(cString: voice.pointee.name), languages,
                           Int(voice.pointee.gender)))
            index += 1
        }
        return result
    }

    /// Selects a voice by espeak-ng name or file (`en-us`, `gmw/en`), or by language code (`en-gb`), keeping a
    /// `+variant` suffix: espeak_SetVoiceByName knows only names and files, so language codes are resolved
    /// through espeak_SetVoiceByProperties and the variant is applied to the voice that was found.
    private func select(_ name: String) throws {
        if espeak_SetVoiceByName(name) == EE_OK { return }
        let parts = name.split(separator: "+", maxSplits: 1).map(String.init)
        var found = false
        parts[0].withCString { language in
            var properties = espeak_VOICE()
            properties.languages = language
            found = espeak_SetVoiceByProperties(&properties) == EE_OK
        }
        if found, parts.count == 2, let current = espeak_GetCurrentVoice()?.pointee.identifier {
            let base = String(cString: current).split(separator: "+").first.map(String.init) ?? ""
            found = espeak_SetVoiceByName(base + "+" + parts[1]) == EE_OK
        }
        guard found else {
            throw VoiceError(.voiceNotFound, provider: "espeak", message: "no espeak-ng voice \"\(name)\" (see `chorus voices --provider espeak`)")
        }
    }

    func currentVoiceIdentifier(for name: String) throws -> String {
        _ = try start()
        try select(name)
        return espeak_GetCurrentVoice()?.pointee.identifier.map { String(cString: $0) } ?? ""
    }

    func speak(_ text: String, voice: EspeakVoice) throws -> EspeakEngine.Output {
        let rate = try start()
        try select(voice.name)
        if let pitch = voice.pitch { try Self.check(espeak_SetParameter(espeakPITCH, Int32(pitch), 0), "espeak_SetParameter(pitch)") }
        if let range = voice.range { try Self.check(espeak_SetParameter(espeakRANGE, Int32(range), 0), "espeak_SetParameter(range)") }
        try Self.check(espeak_SetParameter(espeakRATE, Int32(voice.rate ?? Int(espeakRATE_NORMAL)), 0), "espeak_SetParameter(rate)")
        let collector = Collector()
        let context = Unmanaged.passUnretained(collector).toOpaque()
        let status = withExtendedLifetime(collector) {
            text.withCString { pointer in
                espeak_Synth(pointer, strlen(pointer) + 1, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil, context)
            }
        }
        try Self.check(status, "espeak_Synth")
        try Self.check(espeak_Synchronize(), "espeak_Synchronize")
        return EspeakEngine.Output(rate: rate, samples: collector.samples,
                      words: collector.words.map { EspeakEngine.Word(position: $0.position, length: $0.length, milliseconds: $0.milliseconds) },
                      clauseEnds: collector.clauseEnds)
    }
}

/// An espeak-ng voice spec: `name[+variant]` plus optional `?pitch=0…100&rate=80…450&range=0…100`.
struct EspeakVoice: Sendable, Equatable {
    var name: String
    var pitch: Int?
    var rate: Int?
    var range: Int?

    init(name: String, pitch: Int? = nil, rate: Int? = nil, range: Int? = nil) {
        self.name = name
        self.pitch = pitch
        self.rate = rate
        self.range = range
    }

    init(parsing spec: String) throws {
        let parts = spec.split(separator: "?", maxSplits: 1)
        name = String(parts.first ?? "")
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "-+_".contains($0) }) else {
            throw VoiceError(.voiceNotFound, provider: "espeak", message: "\"\(spec)\" is not an espeak-ng voice name")
        }
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1)
                guard keyValue.count == 2, let value = Int(keyValue[1]) else {
                    throw VoiceError(.badRequest, provider: "espeak", message: "bad voice parameter \"\(pair)\" in \"\(spec)\"")
                }
                switch keyValue[0] {
                case "pitch" where (0...100).contains(value): pitch = value
                case "range" where (0...100).contains(value): range = value
                case "rate" where (80...450).contains(value): rate = value
                default:
                    throw VoiceError(.badRequest, provider: "espeak",
                                     message: "\"\(pair)\" in \"\(spec)\": use pitch=0…100, range=0…100, rate=80…450")
                }
            }
        }
    }

    var spec: String {
        var query: [String] = []
        if let pitch { query.append("pitch=\(pitch)") }
        if let rate { query.append("rate=\(rate)") }
        if let range { query.append("range=\(range)") }
        return query.isEmpty ? name : name + "?" + query.joined(separator: "&")
    }
}

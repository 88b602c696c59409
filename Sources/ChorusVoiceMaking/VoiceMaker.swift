import ChorusAudio
public import ChorusListening
public import ChorusSpeech
import ChorusSupport
public import Foundation

/// Makes a Kokoro voice like a person's from recordings of them, offline: hears the recordings (`Enrolment`), then
/// searches Kokoro's style space for a voice the speaker model hears as that person (`StyleSearch`), and installs it
/// in the Kokoro voices folder with a record of what it was made from (`MadeVoices`), usable at once as
/// `kokoro:NAME`. The same recordings, options and models give the same voice.
///
/// ```swift
/// let record = try await VoiceMaker().make(name: "mom", from: [URL(fileURLWithPath: "mom.m4a")]) { print($0.done, $0.total) }
/// ```
public struct VoiceMaker: Sendable {
    /// How to search.
    public struct Options: Sendable, Equatable {
        /// The search's seed: the same seed, the same voice.
        public var seed: UInt64
        /// Candidate voices heard: the stock voices and their blends, then the search's (at least `leastCandidates`).
        public var candidates: Int
        /// What the voice should sound like; by the person's pitch when not told.
        public var hint: VoiceSound?

        public init(seed: UInt64 = 1, candidates: Int = VoiceMaker.defaultCandidates, hint: VoiceSound? = nil) {
            self.seed = seed
            self.candidates = candidates
            self.hint = hint
        }
    }

    /// Where a creation is.
    public struct Progress: Sendable {
        /// Candidates heard, of `total`.
        public var done: Int
        public var total: Int
        /// The best candidate's similarity to the person so far.
        public var best: Double
    }

    /// About 7 minutes on two cores (docs/benchmarks.md).
    public static let defaultCandidates = 240
    public static let leastCandidates = 4
    public static let mostCandidates = 2_000

    public let kokoro: URL
    public let speaker: URL

    /// - Parameters:
    ///   - kokoro: The Kokoro folder (`KokoroModel.folder`); made voices go into its voices folder.
    ///   - speaker: The speaker model's folder (`SpeakerModel.folder`).
    public init(kokoro: URL = KokoroModel.folder(), speaker: URL = SpeakerModel.folder()) {
        self.kokoro = kokoro
        self.speaker = speaker
    }

    /// Makes voice `name` from `files` (30 s to 10 minutes of one person's speech is best; at least 10 s) and installs it.
    /// Cancelling the task stops the search and leaves no voice behind.
    /// - Returns: Its record (also written beside it).
    /// - Throws: `VoiceMakingError` for a name that is taken or not a name, recordings that cannot make a voice, options
    ///   out of range; `VoiceError` (`.configuration`) when Kokoro or the speaker model is missing or broken, naming the
    ///   file; `CancellationError`.
    public func make(
        name: String, from files: [URL], options: Options = Options(), progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) async throws -> MadeVoiceRecord {
        try await make(name: name, people: [files], options: options, progress: progress)
    }

    /// Makes voice `name` aimed at several people at once (`people`: each one's recordings): the voice their
    /// embeddings share on average, at the geometric mean of their pitches — a voice like none of them in particular,
    /// as Chorus's own English voices are made. One person's recordings must sound like one person; different people
    /// are not compared.
    /// - Throws: as `make(name:from:options:progress:)`.
    public func make(
        name: String, people: [[URL]], options: Options = Options(), progress: @escaping @Sendable (Progress) -> Void = { _ in }
    ) async throws -> MadeVoiceRecord {
        let started = Date()
        guard (Self.leastCandidates...Self.mostCandidates).contains(options.candidates) else {
            throw VoiceMakingError(
                .invalidArgument, subject: "candidates", reason: "must be from \(Self.leastCandidates) to \(Self.mostCandidates)",
                value: "\(options.candidates)")
        }
        guard !people.isEmpty, people.count <= Enrolment.mostRecordings, people.reduce(0, { $0 + $1.count }) <= Enrolment.mostRecordings
        else {
            throw VoiceMakingError(
                .invalidArgument, subject: "recordings", reason: "give 1 to \(Enrolment.mostRecordings) recordings in all",
                value: "\(people.reduce(0) { $0 + $1.count })")
        }
        let workbench = try await KokoroWorkbench.open(folder: kokoro)
        let folder = workbench.model.voicesFolder
        if let problem = MadeVoices.problem(withName: name, in: folder) { throw VoiceMakingError(.name, subject: "name", reason: problem) }
        let encoder = try SpeakerEncoder.shared(folder: speaker)
        var enrolments: [Enrolment] = []
        // Several people: each at least `leastSpeechSecondsEach`, so at least `leastSpeechSeconds` in all.
        let least = people.count > 1 ? Enrolment.leastSpeechSecondsEach : Enrolment.leastSpeechSeconds
        for files in people {
            enrolments.append(try await workbench.onSpeechThreads { try Enrolment.hear(files, encoder: encoder, least: least) })
            try Task.checkCancellation()
        }
        try await SpokenWords.check(enrolments.flatMap(\.recordings))
        let target = Enrolment.shared(by: enrolments)
        let sounds = options.hint ?? (target.pitch >= StyleSearch.femalePitch ? .female : .male)
        let search = try await StyleSearch(workbench: workbench, encoder: encoder, target: target, sounds: sounds)
        let found = try await search.run(seed: options.seed, candidates: options.candidates, progress: progress)
        // The final choice: the best-scored finalist Whisper understands (at most 5 % of words wrong), else the one it
        // understands best.
        var chosen = found.finalists[0]
        var errors: Double?
        var judged: [(candidate: StyleSearch.Candidate, errors: Double)] = []
        for finalist in found.finalists {
            try Task.checkCancellation()
            guard let rate = try await Intelligibility.wordErrorRate(of: finalist.style, workbench: workbench) else { break }
            judged.append((finalist, rate))
            if rate <= Self.mostWordErrors { break }
        }
        if let pick = judged.first(where: { $0.errors <= Self.mostWordErrors }) ?? judged.min(by: { $0.errors < $1.errors }) {
            chosen = pick.candidate
            errors = pick.errors
        }
        let record = MadeVoiceRecord(
            name: name, people: people.count, madeBy: "chorus", created: ISO8601DateFormatter().string(from: started),
            sources: target.recordings.map {
                MadeVoiceRecord.Source(file: $0.file.lastPathComponent, sha256: $0.sha256, seconds: $0.seconds, speechSeconds: $0.speechSeconds)
            },
            sounds: sounds.rawValue, language: StyleSearch.language, personPitch: target.pitch, voicePitch: chosen.pitch,
            similarity: chosen.similarity, nearestStock: found.nearestStock.name, nearestStockSimilarity: found.nearestStock.similarity,
            wordErrorRate: errors, seed: options.seed, candidates: found.heard, seconds: Date().timeIntervalSince(started),
            base: chosen.base, offset: chosen.offset, kokoroModel: workbench.model.sourceDigest, speakerModel: encoder.model.sourceDigest,
            chorusVersion: ChorusVersion.current)
        try Task.checkCancellation()
        do {
            try MadeVoices.install(name: name, style: chosen.style, record: record, in: folder)
        } catch let error as VoiceError where error.kind == .badRequest {
            throw VoiceMakingError(.name, subject: "name", reason: error.message)
        }
        return record
    }

    /// The share of words Whisper may hear wrong in a made voice's reading (`Intelligibility`).
    static let mostWordErrors = 0.05
}

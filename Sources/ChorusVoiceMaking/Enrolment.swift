import ChorusAudio
public import ChorusListening
import Crypto
public import Foundation

/// A person's voice as the recordings give it: their speech found and cut into pieces, each piece's embedding, the
/// embedding they share, the median pitch. Refuses recordings that cannot make a voice, each error naming the file.
public struct Enrolment: Sendable {
    /// One recording as it was heard.
    public struct Recording: Sendable {
        public var file: URL
        public var sha256: String
        public var seconds: Double
        public var speechSeconds: Double
        /// The first `SpokenWords.heardSeconds` of its speech, at `rate`: what Whisper listens to (`SpokenWords`).
        var opening: [Float] = []
    }

    public var recordings: [Recording]
    /// The embedding every piece shares (their unit-length mean).
    public var embedding: [Float]
    /// Each piece's embedding.
    public var pieces: [[Float]]
    /// The median pitch of the speech, in hertz.
    public var pitch: Double
    /// Seconds of speech heard in all (at most `mostSpeechSeconds` are used).
    public var speechSeconds: Double

    /// The rate recordings are heard at (the speaker model's).
    static let rate = SpeakerModel.sampleRate
    /// Speech needed, and the most used. A voice aimed at several people needs `leastSpeechSeconds` in all and
    /// `leastSpeechSecondsEach` of each of them.
    public static let leastSpeechSeconds = 10.0
    public static let leastSpeechSecondsEach = 5.0
    public static let mostSpeechSeconds = 600.0
    /// The most recordings, and the longest one.
    public static let mostRecordings = 16
    public static let longestRecordingSeconds = 1_800.0
    /// Seconds of speech in a piece (the last piece of a recording may be shorter, down to one partial).
    static let pieceSeconds = 4.0
    static let shortestPieceSeconds = 1.6
    /// Below this similarity to the recording's shared embedding a piece is not the same voice.
    static let sameVoice = 0.6

    /// Hears `files`.
    /// - Throws: `VoiceMakingError` (`.recording`) naming the file and why it cannot be used: unreadable (the decoder's
    ///   reason), longer than 30 minutes, silent, less than 10 s of speech in all, a recording whose pieces do not sound
    ///   like one voice, recordings that do not sound like the same person; `VoiceError` when the speaker model is
    ///   missing or broken. `least`: the speech needed (`leastSpeechSecondsEach` for one of several people).
    public static func hear(_ files: [URL], encoder: SpeakerEncoder, least: Double = leastSpeechSeconds) throws -> Enrolment {
        guard !files.isEmpty, files.count <= mostRecordings else {
            throw VoiceMakingError(
                .invalidArgument, subject: "recordings", reason: "give 1 to \(mostRecordings) recordings of one person", value: "\(files.count)")
        }
        var recordings: [Recording] = []
        var speeches: [[Float]] = []
        for file in files {
            let (samples, digest) = try decode(file)
            let speech = Self.speech(in: samples)
            guard !speech.isEmpty else {
                throw VoiceMakingError(.recording, subject: file.path, reason: "no speech heard in it (silent or too quiet)")
            }
            recordings.append(
                Recording(
                    file: file, sha256: digest, seconds: Double(samples.count) / Double(rate),
                    speechSeconds: Double(speech.count) / Double(rate), opening: Array(speech.prefix(Int(SpokenWords.heardSeconds) * rate))))
            speeches.append(speech)
        }
        let total = recordings.reduce(0) { $0 + $1.speechSeconds }
        guard total >= least else {
            throw VoiceMakingError(
                .recording, subject: files.count == 1 ? files[0].path : "recordings",
                reason: String(format: "only %.1f s of speech heard (a voice needs at least %.0f s", total, least)
                    + (least < leastSpeechSeconds ? " of each person)" : ")"))
        }
        // Pieces of each recording until the most speech used is reached.
        var remaining = Int(mostSpeechSeconds) * rate
        var pieces: [[Float]] = []
        var pitchSamples: [Float] = []
        var means: [[Float]] = []
        // Recordings with less speech than a piece ("OK!", "Front left") are heard together at the end.
        var short: [Float] = []
        for (index, speech) in speeches.enumerated() where remaining > 0 {
            let used = Array(speech.prefix(remaining))
            remaining -= used.count
            pitchSamples += used.prefix(120 * rate)
            let own = try cut(used).map { try encoder.embedding(of: $0) }
            guard !own.isEmpty else {
                short += used
                continue
            }
            let mean = SpeakerEncoder.mean(own)
            let strays = own.filter { SpeakerEncoder.similarity($0, mean) < sameVoice }.count
            if own.count >= 3, Double(strays) > Double(own.count) * 0.25 {
                throw VoiceMakingError(
                    .recording, subject: files[index].path,
                    reason: "\(strays) of its \(own.count) pieces do not sound like the rest: more than one voice, or not speech")
            }
            pieces += own
            means.append(mean)
        }
        pieces += try cut(short).map { try encoder.embedding(of: $0) }
        let embedding = SpeakerEncoder.mean(pieces)
        // Each recording against the others together: one that is not like them is another person.
        for (index, mean) in means.enumerated() where means.count > 1 {
            let others = SpeakerEncoder.mean(means.indices.filter { $0 != index }.map { means[$0] })
            if SpeakerEncoder.similarity(mean, others) < sameVoice {
                throw VoiceMakingError(.recording, subject: files[index].path, reason: "does not sound like the same person as the other recordings")
            }
        }
        guard let pitch = Pitch.median(of: pitchSamples, rate: rate) else {
            throw VoiceMakingError(.recording, subject: files.count == 1 ? files[0].path : "recordings", reason: "no voiced speech heard")
        }
        return Enrolment(recordings: recordings, embedding: embedding, pieces: pieces, pitch: pitch, speechSeconds: total)
    }

    /// Several people's enrolments as one target: the unit-length mean of their embeddings (each person counts the same,
    /// whatever their speech), the geometric mean of their pitches, all their recordings.
    static func shared(by people: [Enrolment]) -> Enrolment {
        guard people.count > 1 else { return people[0] }
        return Enrolment(
            recordings: people.flatMap(\.recordings), embedding: SpeakerEncoder.mean(people.map(\.embedding)),
            pieces: people.flatMap(\.pieces), pitch: exp(people.reduce(0) { $0 + log($1.pitch) } / Double(people.count)),
            speechSeconds: people.reduce(0) { $0 + $1.speechSeconds })
    }

    /// The samples of `file` at 16 kHz mono, and the SHA-256 of its bytes.
    static func decode(_ file: URL) throws -> (samples: [Float], sha256: String) {
        let longest = Int(longestRecordingSeconds) * rate
        var samples: [Float] = []
        do {
            let reader = try AudioFileReader(url: file, outputFormat: AudioFormat(sampleRate: rate, channels: 1))
            try reader.readToEnd { block in
                samples.append(contentsOf: block)
                guard samples.count <= longest else {
                    throw VoiceMakingError(.recording, subject: file.path, reason: "longer than \(Int(longestRecordingSeconds / 60)) minutes")
                }
            }
        } catch let error as AudioError {
            throw VoiceMakingError(.recording, subject: file.path, reason: error.named == file.path ? error.reason : error.description)
        }
        var hash = SHA256()
        do {
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hash.update(data: chunk) }
        } catch {
            throw VoiceMakingError(.recording, subject: file.path, reason: "cannot be read (\(error.localizedDescription))")
        }
        return (samples, hash.finalize().map { String(format: "%02x", $0) }.joined())
    }

    /// The speech of `samples` (16 kHz): 30 ms frames within 35 dB of the loudest twentieth and above -55 dBFS, gaps of
    /// less than 0.3 s bridged, sounds of less than 0.15 s dropped, every pause kept at most 0.25 s long.
    static func speech(in samples: [Float]) -> [Float] {
        let frame = rate * 30 / 1000
        let count = samples.count / frame
        guard count > 0 else { return [] }
        let levels = (0..<count).map { index -> Double in
            var sum: Float = 0
            for sample in samples[(index * frame)..<((index + 1) * frame)] { sum += sample * sample }
            return 10 * log10(Double(sum) / Double(frame) + 1e-12)
        }
        let loud = levels.sorted()[Int(Double(count - 1) * 0.95)]
        let threshold = max(loud - 35, -55)
        var voiced = levels.map { $0 > threshold }
        // Bridge short gaps, then drop short sounds.
        func runs(of value: Bool) -> [Range<Int>] {
            var result: [Range<Int>] = []
            var start: Int?
            for index in 0...count {
                let here = index < count && voiced[index] == value
                if here, start == nil { start = index }
                if !here, let first = start {
                    result.append(first..<index)
                    start = nil
                }
            }
            return result
        }
        for gap in runs(of: false) where gap.lowerBound > 0 && gap.upperBound < count && gap.count * 30 < 300 {
            for index in gap { voiced[index] = true }
        }
        for sound in runs(of: true) where sound.count * 30 < 150 {
            for index in sound { voiced[index] = false }
        }
        var speech: [Float] = []
        let pause = rate / 4
        for sound in runs(of: true) {
            if !speech.isEmpty { speech += [Float](repeating: 0, count: pause) }
            speech += samples[(sound.lowerBound * frame)..<(sound.upperBound * frame)]
        }
        return speech
    }

    /// `speech` cut into pieces of `pieceSeconds` (the last one kept when it is at least `shortestPieceSeconds`).
    static func cut(_ speech: [Float]) -> [[Float]] {
        let piece = Int(pieceSeconds * Double(rate))
        return stride(from: 0, to: speech.count, by: piece).compactMap { start in
            let end = min(start + piece, speech.count)
            return Double(end - start) >= shortestPieceSeconds * Double(rate) ? Array(speech[start..<end]) : nil
        }
    }
}

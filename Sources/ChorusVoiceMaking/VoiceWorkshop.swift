public import ChorusSpeech
import ChorusSupport
import Crypto
public import Foundation

/// Voices being made for several owners (a service's API keys): a bounded queue of creations, made one at a time (a
/// creation uses every speech thread it may), each with its progress. A voice made here is stored under a name that
/// carries its owner's tag (`storedName`), so one owner's voices are neither listed for nor usable by another
/// (`owns`). What it was given to hear is removed when its creation ends, made or not.
public final class VoiceWorkshop: Sendable {
    /// Where a creation is.
    public enum State: String, Sendable, Codable {
        case queued, making, ready, failed, cancelled
    }

    /// One creation.
    public struct Job: Sendable, Equatable {
        public var id: String
        public var owner: String
        /// The name it was asked for, and the voice's name in the Kokoro folder (`kokoro:<voice>`).
        public var displayName: String
        public var voice: String
        public var state: State
        /// Candidates heard, of `total`, and the best similarity so far.
        public var done: Int
        public var total: Int
        public var best: Double
        /// Why it failed.
        public var error: String?
        /// The voice's record once made.
        public var record: MadeVoiceRecord?
    }

    /// Why a creation was not taken.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public var description: String
        /// The queue is full (try again later) rather than the request being wrong.
        public var isFull: Bool
    }

    private struct Waiting: Sendable {
        var job: String
        var files: [URL]
        var options: VoiceMaker.Options
        var cleanup: @Sendable () -> Void
    }

    private struct Ledger {
        var jobs: [String: Job] = [:]
        /// Finished jobs, oldest first (at most `keep` are kept).
        var finished: [String] = []
        var queue: [Waiting] = []
        var running: (job: String, task: Task<Void, Never>)?
    }

    private let ledger = Locked(Ledger())
    public let maker: VoiceMaker
    /// The most creations waiting or running.
    public let limit: Int
    private let keep = 64

    public init(maker: VoiceMaker = VoiceMaker(), limit: Int = 4) {
        self.maker = maker
        self.limit = max(1, limit)
    }

    /// The tag an owner's voice names start with: `m` and 8 hex digits of the owner's SHA-256.
    public static func tag(of owner: String) -> String {
        "m" + SHA256.hash(data: Data(owner.utf8)).prefix(4).map { String(format: "%02x", $0) }.joined()
    }

    /// The stored name for `displayName` (letters and digits kept, lower case, others as `_`, at most 32) of `owner`.
    public static func storedName(_ displayName: String, owner: String) -> String {
        var slug = String(displayName.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" }.prefix(32))
        while slug.contains("__") { slug = slug.replacingOccurrences(of: "__", with: "_") }
        slug = slug.trimmingCharacters(in: CharacterSet(charactersIn: "_"))
        return "\(tag(of: owner))_\(slug.isEmpty ? "voice" : slug)"
    }

    /// Whether `voice` (a Kokoro voice name) may be used by `owner`: any voice not stored with an owner's tag, and the
    /// owner's own.
    public static func owns(_ voice: String, owner: String) -> Bool {
        let letters = Array(voice)
        guard letters.count > 10, letters[0] == "m", letters[9] == "_", letters[1...8].allSatisfy(\.isHexDigit) else { return true }
        return voice.hasPrefix(tag(of: owner) + "_")
    }

    /// Takes a creation of a voice named `displayName` for `owner` from `files` (which `cleanup` removes when it ends).
    /// - Returns: The job, queued.
    /// - Throws: `Refusal` when the queue is full or the name is taken (by a made voice or a creation of this owner).
    public func submit(
        owner: String, displayName: String, files: [URL], options: VoiceMaker.Options, cleanup: @escaping @Sendable () -> Void
    ) throws -> Job {
        let base = Self.storedName(displayName, owner: owner)
        let folder = KokoroModel.voicesFolder(of: maker.kokoro)
        let job = try ledger.withLock { ledger -> Job in
            guard ledger.queue.count + (ledger.running == nil ? 0 : 1) < limit else {
                throw Refusal(description: "\(limit) voices are being made or waiting; try again later", isFull: true)
            }
            // The first free name: base, base_2, base_3, …
            let busy = Set(ledger.jobs.values.filter { $0.state == .queued || $0.state == .making }.map(\.voice))
            var voice = base
            var number = 1
            while busy.contains(voice) || MadeVoices.problem(withName: voice, in: folder) != nil {
                number += 1
                voice = "\(base)_\(number)"
                guard number < 1_000 else { throw Refusal(description: "no free name for \"\(displayName)\"", isFull: false) }
            }
            let job = Job(
                id: UUID().uuidString.lowercased(), owner: owner, displayName: displayName, voice: voice, state: .queued, done: 0,
                total: options.candidates, best: 0, error: nil, record: nil)
            ledger.jobs[job.id] = job
            ledger.queue.append(Waiting(job: job.id, files: files, options: options, cleanup: cleanup))
            return job
        }
        startNext()
        return job
    }

    /// Job `id`, if it is `owner`'s.
    public func job(_ id: String, owner: String) -> Job? {
        ledger.withLock { $0.jobs[id] }.flatMap { $0.owner == owner ? $0 : nil }
    }

    /// `owner`'s creations not finished.
    public func pending(owner: String) -> [Job] {
        ledger.withLock { ledger in ledger.jobs.values.filter { $0.owner == owner && ($0.state == .queued || $0.state == .making) } }
            .sorted { $0.id < $1.id }
    }

    /// Stops the creation of `voice` for `owner` (queued or being made): nothing is left of it.
    /// - Returns: Whether there was one.
    public func cancel(voice: String, owner: String) -> Bool {
        let (found, waiting, task) = ledger.withLock { ledger -> (Bool, Waiting?, Task<Void, Never>?) in
            guard
                let job = ledger.jobs.values.first(where: { $0.voice == voice && $0.owner == owner && ($0.state == .queued || $0.state == .making) })
            else { return (false, nil, nil) }
            if let index = ledger.queue.firstIndex(where: { $0.job == job.id }) {
                let waiting = ledger.queue.remove(at: index)
                Self.finish(job.id, state: .cancelled, error: "cancelled", in: &ledger, keep: keep)
                return (true, waiting, nil)
            }
            return (true, nil, ledger.running?.job == job.id ? ledger.running?.task : nil)
        }
        waiting?.cleanup()
        task?.cancel()
        return found
    }

    private static func finish(_ id: String, state: State, error: String? = nil, record: MadeVoiceRecord? = nil, in ledger: inout Ledger, keep: Int) {
        ledger.jobs[id]?.state = state
        ledger.jobs[id]?.error = error
        ledger.jobs[id]?.record = record
        ledger.finished.append(id)
        while ledger.finished.count > keep { ledger.jobs[ledger.finished.removeFirst()] = nil }
    }

    /// Starts the next queued creation unless one is being made.
    private func startNext() {
        ledger.withLock { ledger in
            guard ledger.running == nil, !ledger.queue.isEmpty else { return }
            let next = ledger.queue.removeFirst()
            guard let job = ledger.jobs[next.job] else { return }
            ledger.jobs[next.job]?.state = .making
            let task = Task { [maker, keep] in
                defer { next.cleanup() }
                let outcome: (State, String?, MadeVoiceRecord?)
                do {
                    let record = try await maker.make(name: job.voice, from: next.files, options: next.options) { progress in
                        self.ledger.withLock { ledger in
                            ledger.jobs[job.id]?.done = progress.done
                            ledger.jobs[job.id]?.total = progress.total
                            ledger.jobs[job.id]?.best = progress.best
                        }
                    }
                    outcome = (.ready, nil, record)
                } catch is CancellationError {
                    outcome = (.cancelled, "cancelled", nil)
                } catch {
                    outcome = (.failed, String(describing: error), nil)
                }
                self.ledger.withLock { ledger in
                    Self.finish(job.id, state: outcome.0, error: outcome.1, record: outcome.2, in: &ledger, keep: keep)
                    ledger.running = nil
                }
                self.startNext()
            }
            ledger.running = (next.job, task)
        }
    }
}

import Foundation

/// Every thread a Chorus process starts, pool by pool: the one account of them. Each of Chorus's pools takes its size
/// from here and names its threads after its `Pool.name` (what `/proc/<pid>/task/*/comm` shows), so the account is
/// checked against a running service (`ThreadBudgetTests`); docs/internals.md's table of threads is `markdownTable`.
///
/// Two knobs size it: the machine's cores and `workers` (the service's `--workers`, a `Chorus`'s `workerThreads`).
/// `workers` bounds the audio work and Whisper's lanes; Piper's synthesis threads and ONNX Runtime's pool are one per
/// core and process-wide (a network run is CPU work that more threads than cores only slow down). The libraries' own
/// threads (NIO's event loops and blocking pool, libdispatch's, which also runs Swift's cooperative pool) are
/// accounted as they size themselves: one per core each, libdispatch up to twice that when its threads block.
public struct ThreadBudget: Sendable, Equatable {
    /// One pool of threads.
    public struct Pool: Sendable, Equatable {
        /// The start of its threads' names (an OS thread name holds 15 bytes).
        public let name: String
        /// The most threads it runs at once.
        public let threads: Int
        /// Who starts it, and when.
        public let owner: String
        /// Whether Chorus names its threads (the libraries name theirs).
        public let named: Bool
    }

    public let cores: Int
    public let workers: Int

    /// - Parameters:
    ///   - cores: The machine's cores (`ThreadBudget.machineCores` unless told).
    ///   - workers: Threads for audio work (at least 1; the cores unless told).
    public init(cores: Int = ThreadBudget.machineCores, workers: Int? = nil) {
        self.cores = max(1, cores)
        self.workers = max(1, workers ?? cores)
    }

    /// The cores this process may use.
    public static var machineCores: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// Whisper recognizers kept loaded at once (`WhisperLoader`): each keeps its own lanes.
    public static let whisperModels = 2

    /// The most lanes one Whisper recognizer keeps (each holds a decoding cache; the networks are shared).
    public static let mostWhisperLanes = 8

    /// Audio work of one `Chorus` (decode, resample, normalize, encode, pictures): `workers`.
    public var audio: Int { workers }
    /// The neural voices' (Piper's, Kokoro's) synthesis threads, process-wide: one per core (each runs a network on its own).
    public var speech: Int { cores }
    /// Lanes of one Whisper recognizer: one per worker, at most `mostWhisperLanes`.
    public var whisperLanes: Int { min(workers, Self.mostWhisperLanes) }
    /// ONNX Runtime's shared pool, process-wide: one per core.
    public var inference: Int { cores }

    /// Encoder pieces at once (`ParallelEncoder`, each on a serial queue of its own): a render's encoder, on an audio
    /// worker, runs at most `RenderOptions.defaultJobs` (the cores) pieces at once.
    public var encoderPieces: Int { workers * cores }

    /// Every pool of a service process, Chorus's own first.
    public var pools: [Pool] {
        [
            Pool(name: "chorus-audio", threads: audio, owner: "a `Chorus` (the service's one), at its start", named: true),
            Pool(name: "speech", threads: speech, owner: "the first Piper or Kokoro voice spoken", named: true),
            Pool(name: "piper-load", threads: 1, owner: "the first Piper voice loaded", named: true),
            Pool(
                name: "kokoro-load", threads: 1,
                owner: "the first Kokoro voice spoken (the model is loaded once; again on the shared pool when a stream first waits for it)",
                named: true),
            Pool(name: "flite", threads: 1, owner: "the first Flite voice spoken (Flite is not thread-safe)", named: true),
            Pool(
                name: "espeak", threads: 2,
                owner:
                    "the first espeak-ng voice spoken or phonemized: Chorus's thread (one state per process) and libespeak-ng's own queue's (idle)",
                named: true),
            Pool(
                name: "whisper-lane", threads: whisperLanes * Self.whisperModels,
                owner: "each Whisper model loaded (at most \(Self.whisperModels) kept), \(whisperLanes) lanes each", named: true),
            Pool(name: "whisper-load", threads: 1, owner: "the first Whisper model loaded", named: true),
            Pool(
                name: "onnx", threads: 2 * inference + 2,
                owner:
                    "ONNX Runtime, at the first network loaded: its shared pool (one per core) and threads it starts itself while runs of several networks overlap (measured: 5 on two cores with Piper, Kokoro and Whisper loaded)",
                named: true),
            Pool(name: "NIO-", threads: 2 * cores, owner: "NIO's event loops and blocking pool (HTTP in and out)", named: false),
            Pool(name: "TP-", threads: 1, owner: "the service's SQLite connection", named: false),
            Pool(
                name: "dispatch", threads: 2 * cores + 4 + encoderPieces,
                owner: "libdispatch: Swift's tasks, timers and signals (twice the cores when they block), and encoder pieces", named: false),
            Pool(name: "main", threads: 1, owner: "the process's main thread", named: false),
        ]
    }

    /// The most threads the process runs at once.
    public var total: Int { pools.reduce(0) { $0 + $1.threads } }

    /// The table of docs/internals.md.
    public var markdownTable: String {
        var lines = ["| Threads named | At most (\(cores) cores, \(workers) workers) | Started by |", "|---|---|---|"]
        for pool in pools {
            let name = pool.named ? "`\(pool.name)`" : "(\(pool.name))"
            lines.append("| \(name) | \(pool.threads) | \(pool.owner) |")
        }
        lines.append("| all | \(total) | |")
        return lines.joined(separator: "\n")
    }

    /// Names the calling thread: what the OS shows of it (its first 15 bytes), written where Linux keeps it.
    package static func nameThread(_ name: String) {
        guard let file = FileHandle(forWritingAtPath: "/proc/thread-self/comm") else { return }
        defer { try? file.close() }
        try? file.write(contentsOf: Data(name.utf8.prefix(15)))
    }

    /// The calling thread's name, as the OS has it.
    package static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
    }

    /// Runs `body` with the calling thread named `name` (threads it starts take that name), then names it back.
    package static func naming<T>(threadsStartedBy body: () throws -> T, as name: String) rethrows -> T {
        let before = threadName()
        nameThread(name)
        defer { nameThread(before) }
        return try body()
    }
}

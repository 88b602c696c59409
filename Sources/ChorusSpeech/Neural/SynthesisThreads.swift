import ChorusAudio
import ChorusSupport

/// The threads neural voices (Piper, Kokoro) synthesize on, process-wide: one per core (`ThreadBudget.speech`), each
/// running one network call at a time on its own thread (measured faster than one call on two threads), never on
/// Swift's cooperative pool (a sentence is a second of CPU work).
enum SynthesisThreads {
    static let pool = WorkerPool(threads: ThreadBudget().speech, name: "speech")

    /// Whether speech asked for by the current task is urgent: a listener waits for it (a stream's first message,
    /// `RenderStitching`, whose task has a high priority). The task's own priority: `Task.currentPriority` gives a child
    /// task added with a high priority as medium on Linux (measured: such a message was never urgent).
    static var isUrgent: Bool { (Task.basePriority ?? .medium) >= .high }

    /// Each of `sentences` spoken by `speak` on these threads at once, in order; urgent (`isUrgent`), before other
    /// speech waiting, and `speak` told so (Kokoro then runs it on every core).
    static func speak(
        _ sentences: [String], by speak: @escaping @Sendable (_ sentence: String, _ urgent: Bool) throws -> SpokenPhonemes
    ) async throws -> [SpokenPhonemes] {
        let urgent = isUrgent
        return try await withThrowingTaskGroup(of: (Int, SpokenPhonemes).self) { group in
            for (index, sentence) in sentences.enumerated() {
                group.addTask { (index, try await pool.run(urgent: urgent) { try speak(sentence, urgent) }) }
            }
            var parts = [SpokenPhonemes?](repeating: nil, count: sentences.count)
            for try await (index, part) in group { parts[index] = part }
            return parts.compactMap { $0 }
        }
    }
}

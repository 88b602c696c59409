import ChorusAudio

/// The threads neural voices (Piper, Kokoro) synthesize on, process-wide: one per core (`ThreadBudget.speech`), each
/// running one network call at a time on its own thread (measured faster than one call on two threads), never on
/// Swift's cooperative pool (a sentence is a second of CPU work).
enum SynthesisThreads {
    static let pool = WorkerPool(threads: ThreadBudget().speech, name: "speech")

    /// Each of `sentences` spoken by `speak` on these threads at once, in order; before other speech waiting when the
    /// calling task's priority is high (the message a render's audio waits for, `RenderStitching`).
    static func speak(_ sentences: [String], by speak: @escaping @Sendable (String) throws -> SpokenPhonemes) async throws -> [SpokenPhonemes] {
        let urgent = Task.currentPriority >= .high
        return try await withThrowingTaskGroup(of: (Int, SpokenPhonemes).self) { group in
            for (index, sentence) in sentences.enumerated() {
                group.addTask { (index, try await pool.run(urgent: urgent) { try speak(sentence) }) }
            }
            var parts = [SpokenPhonemes?](repeating: nil, count: sentences.count)
            for try await (index, part) in group { parts[index] = part }
            return parts.compactMap { $0 }
        }
    }
}

import Foundation

/// The one owner of libc's random numbers (`rand()`), which two C libraries Chorus links draw from while they speak:
/// Flite's voices for the noise that excites unvoiced sounds, espeak-ng's variants (`+f3`, `+klatt`, `+whisper`) for
/// their breath and noise. The sequence is one per process, so a Flite utterance while an espeak-ng variant spoke on
/// its own thread gave audio that depended on what else was being said (found by `FliteTests.sameTextSameAudio`
/// failing beside the espeak-ng tests; `EspeakTests.fliteBesideVariant` holds it). Each utterance of either runs inside
/// `seeded(_:)`: alone with the sequence, which starts from glibc's start-up seed, so the same text and Flite voice
/// give the same audio whatever runs beside them. (espeak-ng's variants carry state of their own from one utterance to
/// the next, so theirs differ a little anyway. ONNX Runtime, Piper's phonemes and the FFmpeg paths Chorus uses were
/// measured not to draw from it.)
package enum SeededRandom {
    /// Turns in the order they were asked for: a library speaking utterance after utterance never keeps the other
    /// waiting (a plain lock let the thread that just let go take it again).
    private static let turns = Turns()

    /// Runs `body` (a whole utterance of a library that draws from `rand()`) with the sequence to itself, seeded.
    /// Called on the library's own thread (it blocks while another library's utterance runs).
    package static func seeded<Result>(_ body: () throws -> Result) rethrows -> Result {
        let ticket = turns.wait()
        defer { turns.done(ticket) }
        srand(1)
        return try body()
    }

    /// A first-come, first-served lock: a ticket each, served in order.
    private final class Turns: @unchecked Sendable {
        private let condition = NSCondition()
        private var issued = 0
        private var serving = 0

        /// Blocks until the caller's turn; its ticket.
        func wait() -> Int {
            condition.lock()
            defer { condition.unlock() }
            let ticket = issued
            issued += 1
            while serving != ticket { condition.wait() }
            return ticket
        }

        /// Ends the turn of `ticket`, the one being served.
        func done(_ ticket: Int) {
            condition.lock()
            defer { condition.unlock() }
            precondition(ticket == serving, "turns end in order")
            serving += 1
            condition.broadcast()
        }
    }
}

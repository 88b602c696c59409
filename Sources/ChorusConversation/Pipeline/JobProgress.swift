import ChorusSupport
import ChorusWire
import Foundation

/// One render's counters, updated from concurrent tasks; every change is reported at once.
final class JobProgress: Sendable {
    private let progress: Locked<RenderProgress>
    private let report: @Sendable (RenderProgress) -> Void

    init(_ initial: RenderProgress, report: @escaping @Sendable (RenderProgress) -> Void) {
        progress = Locked(initial)
        self.report = report
    }

    var current: RenderProgress { progress.value }

    /// Applies `change`; reports the new counts when `announce` (requests alone are not worth an event).
    func update(announce: Bool = true, _ change: (inout RenderProgress) -> Void) {
        progress.withLock { progress in
            change(&progress)
            let snapshot = progress
            if announce { report(snapshot) }
        }
    }
}

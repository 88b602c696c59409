import Foundation

/// One render's counters, updated from concurrent tasks; every change is reported at once.
final class JobProgress: @unchecked Sendable {
    private let lock = NSLock()
    private var progress: RenderProgress
    private let report: @Sendable (RenderProgress) -> Void

    init(_ initial: RenderProgress, report: @escaping @Sendable (RenderProgress) -> Void) {
        progress = initial
        self.report = report
    }

    var current: RenderProgress {
        lock.lock()
        defer { lock.unlock() }
        return progress
    }

    /// Applies `change`; reports the new counts when `announce` (requests alone are not worth an event).
    func update(announce: Bool = true, _ change: (inout RenderProgress) -> Void) {
        lock.lock()
        change(&progress)
        let snapshot = progress
        if announce { report(snapshot) }
        lock.unlock()
    }
}

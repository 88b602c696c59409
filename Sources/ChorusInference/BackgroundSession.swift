package import ChorusSupport
import Foundation

/// A session made in the background when first asked for: `nil` until it is ready (and for good if it cannot be made:
/// the caller's other session serves instead).
package final class BackgroundSession: Sendable {
    private enum State {
        case notAsked, loading, ready(InferenceSession), failed
    }

    private let loader: WorkerPool
    private let make: @Sendable () throws -> InferenceSession
    private let state = Locked(State.notAsked)

    package init(loader: WorkerPool, make: @escaping @Sendable () throws -> InferenceSession) {
        self.loader = loader
        self.make = make
    }

    /// Whether the session is ready (without asking for it).
    package var isReady: Bool {
        state.withLock {
            if case .ready = $0 { return true }
            return false
        }
    }

    /// The session when it is ready; the first ask starts making it on `loader`.
    package var session: InferenceSession? {
        let (ready, start) = state.withLock { state -> (InferenceSession?, Bool) in
            switch state {
            case .ready(let session): return (session, false)
            case .loading, .failed: return (nil, false)
            case .notAsked:
                state = .loading
                return (nil, true)
            }
        }
        if start {
            let (loader, make, state) = (self.loader, self.make, self.state)
            Task {
                let made = try? await loader.run(make)
                state.withLock { $0 = made.map(State.ready) ?? .failed }
            }
        }
        return ready
    }
}

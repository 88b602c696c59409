/// The audio fast path's decisions on one connection, as a state machine without NIO (the way swift-nio keeps its own
/// handlers' states), so that they are tested on their own: which request parts go to the router and which the fast
/// path answers, when parts wait, and when the socket is read again. `AudioFastPathHandler` carries the actions out.
///
/// The rules: order and pace are the router's. While the router owes an answer, later requests go to it too. While an
/// answer of the fast path is being sent, later request parts wait here (and the socket is not read), and they are
/// handled in order once its bytes are out. A failed send drops what waited (the connection is closed).
struct FastPathConnectionState<Part, Answer> {
    /// What a request part is.
    enum Kind: Sendable { case head, body, end }

    /// What to do with a part that arrived (or waited).
    enum Action {
        /// Pass it on to the router.
        case forward(Part)
        /// Nothing: it belongs to a request the fast path answers.
        case drop
        /// The request is complete: send this answer.
        case send(Answer)
        /// It waits until the answer being sent is out.
        case wait
    }

    /// Requests passed on to the router whose responses have not ended yet.
    private(set) var routerPending = 0
    /// An answer's body is being sent.
    private(set) var sending = false
    /// Parts that arrived while an answer was being sent, in order.
    private(set) var waiting: [(Part, Kind)] = []
    /// The channel asked to read while parts waited or an answer was sent.
    private(set) var readHeld = false
    /// The answer to the request being read, sent at its end.
    private var answer: Answer?

    /// A request part arrived; `answer` is the fast path's answer to a head, `nil` to leave the request to the router
    /// (asked only when the router owes nothing, so that answers keep the requests' order).
    mutating func received(_ part: Part, _ kind: Kind, answer: (Part) -> Answer?) -> Action {
        if sending || !waiting.isEmpty {
            waiting.append((part, kind))
            return .wait
        }
        return handle(part, kind, answer: answer)
    }

    private mutating func handle(_ part: Part, _ kind: Kind, answer make: (Part) -> Answer?) -> Action {
        switch kind {
        case .head:
            answer = routerPending == 0 ? make(part) : nil
            guard answer == nil else { return .drop }
            routerPending += 1
            return .forward(part)
        case .body:
            return answer == nil ? .forward(part) : .drop
        case .end:
            guard let complete = answer else { return .forward(part) }
            answer = nil
            return .send(complete)
        }
    }

    /// The channel wants to read: `true` to read now; `false` holds the read until the waiting parts are handled.
    mutating func readRequested() -> Bool {
        guard sending || !waiting.isEmpty else { return true }
        readHeld = true
        return false
    }

    /// The router wrote the end of a response.
    mutating func routerAnswered() { routerPending -= 1 }

    /// The answer being sent has a body, written from now on.
    mutating func bodyStarted() { sending = true }

    /// The body has been written, or its write failed (then what waited is dropped: the connection closes).
    mutating func bodyFinished(success: Bool) {
        sending = false
        if !success { waiting = [] }
    }

    /// The next waiting part's action, while no answer is being sent; `nil` when none is due.
    mutating func nextWaiting(answer: (Part) -> Answer?) -> Action? {
        guard !sending, !waiting.isEmpty else { return nil }
        let (part, kind) = waiting.removeFirst()
        return handle(part, kind, answer: answer)
    }

    /// After the waiting parts: `true` when a read held meanwhile is due now.
    mutating func heldReadDue() -> Bool {
        guard !sending, waiting.isEmpty, readHeld else { return false }
        readHeld = false
        return true
    }

    /// The handler is removed: the answer not yet sent (its file to close), if any; nothing waits any more.
    mutating func removed() -> Answer? {
        defer {
            answer = nil
            waiting = []
        }
        return answer
    }
}

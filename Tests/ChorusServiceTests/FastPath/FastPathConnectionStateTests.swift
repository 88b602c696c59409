import Testing

@testable import ChorusService

/// The audio fast path's decisions on a connection (`FastPathConnectionState`), driven part by part: what goes to the
/// router, what it answers, what waits, and when the socket is read.
@Suite("Audio fast path: connection state")
struct FastPathConnectionStateTests {
    typealias State = FastPathConnectionState<String, String>

    /// Parts are named `<request>.<kind>`; requests named `audio…` are ones the fast path answers (with `answer:<name>`).
    static func answer(_ part: String) -> String? { part.hasPrefix("audio") ? "answer:\(part.split(separator: ".")[0])" : nil }

    static func describe(_ action: State.Action) -> String {
        switch action {
        case .forward(let part): return "forward \(part)"
        case .drop: return "drop"
        case .send(let answer): return "send \(answer)"
        case .wait: return "wait"
        }
    }

    static func feed(_ state: inout State, _ parts: [(String, State.Kind)]) -> [String] {
        parts.map { describe(state.received($0.0, $0.1, answer: answer)) }
    }

    @Test("a request the fast path answers is consumed and answered at its end; one it does not is passed on whole")
    func answeredOrPassedOn() {
        var state = State()
        let first = Self.feed(&state, [("audio1.head", .head), ("audio1.body", .body), ("audio1.end", .end)])
        #expect(first == ["drop", "drop", "send answer:audio1"])
        #expect(state.routerPending == 0)
        #expect(
            Self.feed(&state, [("post.head", .head), ("post.body", .body), ("post.end", .end)])
                == ["forward post.head", "forward post.body", "forward post.end"])
        #expect(state.routerPending == 1)
    }

    @Test("while the router owes an answer, a request it could answer goes to the router too (answers keep their order)")
    func routerFirst() {
        var state = State()
        _ = Self.feed(&state, [("slow.head", .head), ("slow.end", .end)])
        let fed1 = Self.feed(&state, [("audio2.head", .head), ("audio2.end", .end)])
        #expect(fed1 == ["forward audio2.head", "forward audio2.end"])
        state.routerAnswered()
        state.routerAnswered()
        #expect(state.routerPending == 0)
        let fed2 = Self.feed(&state, [("audio3.head", .head), ("audio3.end", .end)])
        #expect(fed2 == ["drop", "send answer:audio3"])
    }

    @Test("while an answer's bytes are sent, later parts wait and reads are held; then they are handled in order, and the read happens")
    func pipelinedWhileSending() {
        var state = State()
        let fed3 = Self.feed(&state, [("audio1.head", .head), ("audio1.end", .end)])
        #expect(fed3 == ["drop", "send answer:audio1"])
        state.bodyStarted()
        let fed4 = Self.feed(&state, [("audio2.head", .head), ("audio2.end", .end), ("post.head", .head)])
        #expect(fed4 == ["wait", "wait", "wait"])
        let readNow = state.readRequested()
        #expect(!readNow)
        let early = state.nextWaiting(answer: Self.answer)
        #expect(early == nil, "nothing is handled while the answer is still being sent")
        state.bodyFinished(success: true)
        var handled: [String] = []
        while let action = state.nextWaiting(answer: Self.answer) {
            handled.append(Self.describe(action))
            if case .send = action { state.bodyStarted() }  // the second answer has a body too
        }
        #expect(handled == ["drop", "send answer:audio2"], "the head after the second answer waits for its bytes")
        let dueWhileSending = state.heldReadDue()
        #expect(!dueWhileSending)
        state.bodyFinished(success: true)
        let post = state.nextWaiting(answer: Self.answer)
        #expect(post.map(Self.describe) == "forward post.head")
        let none = state.nextWaiting(answer: Self.answer)
        #expect(none == nil)
        let due = state.heldReadDue()
        let dueAgain = state.heldReadDue()
        #expect(due)
        #expect(!dueAgain, "a held read happens once")
        let readLater = state.readRequested()
        #expect(readLater)
    }

    @Test("a failed send drops what waited; a handler removed mid-request gives back the answer it held (its file to close)")
    func failureAndRemoval() {
        var state = State()
        _ = Self.feed(&state, [("audio1.head", .head), ("audio1.end", .end)])
        state.bodyStarted()
        _ = Self.feed(&state, [("audio2.head", .head), ("audio2.end", .end)])
        state.bodyFinished(success: false)
        let afterFailure = state.nextWaiting(answer: Self.answer)
        #expect(state.waiting.isEmpty && afterFailure == nil)
        let fed5 = Self.feed(&state, [("audio3.head", .head)])
        #expect(fed5 == ["drop"])
        let held = state.removed()
        let heldAgain = state.removed()
        #expect(held == "answer:audio3")
        #expect(heldAgain == nil)
    }
}

extension FastPathConnectionState.Action: Equatable where Part: Equatable, Answer: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.forward(let a), .forward(let b)): return a == b
        case (.send(let a), .send(let b)): return a == b
        case (.drop, .drop), (.wait, .wait): return true
        default: return false
        }
    }
}

public import ChorusAudio
public import ChorusWire

/// What a render reports while it runs (see `RenderRun`).
public enum RenderEvent: Sendable {
    /// Counts changed: a message synthesized or rendered, a cache hit, a retry, a fallback.
    case progress(RenderProgress)
    /// A message's place in the output is fixed: its timeline entry (exact samples, words).
    case segment(Timeline.Segment)
    /// Something the user should know that does not stop the render (a silent clip, a quiet one).
    case warning(String)
    /// The render is complete and its files are in place.
    case finished(RenderResult)
}

/// Where a render stands.
public struct RenderProgress: Sendable, Equatable {
    /// Messages in the conversation.
    public var total: Int
    /// Messages that need a voice.
    public var toSynthesize: Int
    /// Of those, messages whose audio exists (from the cache or a provider).
    public var synthesized = 0
    /// Messages stitched into the output, in order.
    public var rendered = 0
    /// Synthesis requests answered from the cache.
    public var cacheHits = 0
    /// Requests sent to providers (each retry counts).
    public var requests = 0
    public var retries = 0
    /// Messages spoken by the fallback voice.
    public var fallbacks = 0

    public init(total: Int, toSynthesize: Int) {
        self.total = total
        self.toSynthesize = toSynthesize
    }
}

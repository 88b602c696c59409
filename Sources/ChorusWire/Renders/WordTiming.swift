/// A word and when it is spoken, in seconds: from the start of its clip in `RenderMessage.words`,
/// from the start of the output in `Timeline.Segment.words`.
public struct WordTiming: Sendable, Equatable, Codable {
    public var word: String
    public var start: Double
    public var end: Double

    public init(word: String, start: Double, end: Double) {
        self.word = word
        self.start = start
        self.end = end
    }
}

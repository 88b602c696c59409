import ChorusText

extension Conversation.Message {
    /// The text as shown: without its controls or markup (`shown(_:)`).
    public var visibleText: String? { text.map(Self.shown) }

    /// A text as shown: an SSML document's written text (`SSML.visible`), else the text without its
    /// `[pause:…]` controls (`SpeechControls.visible`).
    public static func shown(_ text: String) -> String {
        SSML.isSSML(text) ? SSML.visible(text) : SpeechControls.visible(text)
    }
}

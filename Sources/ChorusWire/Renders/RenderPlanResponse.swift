/// `POST /v1/renders/plan`: what a render of the request would be, without rendering it — checked as the render would
/// be (the same errors), its id (the render's own: `GET /v1/renders/{id}` finds it once rendered), whether it exists
/// already, and the voice each speaker and message would have, named or given by the defaults.
public struct RenderPlanResponse: Codable, Sendable, Equatable {
    public struct Speaker: Codable, Sendable, Equatable {
        public var name: String
        /// The voice of the speaker's first spoken message; none when they only send recordings.
        public var voice: String?
        /// The voice was not named (by `voices` or the message): the defaults gave it.
        public var byDefault: Bool

        enum CodingKeys: String, CodingKey { case name, voice, byDefault = "by_default" }

        public init(name: String, voice: String?, byDefault: Bool) {
            self.name = name
            self.voice = voice
            self.byDefault = byDefault
        }
    }

    public var id: String
    /// A finished render of this id exists (rendering it again answers at once).
    public var rendered: Bool
    /// In order of first appearance (a spoken intro's speaker first).
    public var speakers: [Speaker]
    /// Each message's voice; none for a recorded one.
    public var messages: [String?]

    public init(id: String, rendered: Bool, speakers: [Speaker], messages: [String?]) {
        self.id = id
        self.rendered = rendered
        self.speakers = speakers
        self.messages = messages
    }
}

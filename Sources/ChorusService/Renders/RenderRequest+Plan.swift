import ChorusConversation
import ChorusWire

extension RenderRequest {
    /// This request with its plan's voices written into it — every spoken message's and bookend's `voice` — so that
    /// resolving it again (a restart resuming it, another instance claiming it from the shared queue) gives the plan
    /// its id describes, whatever voices are installed by then.
    func pinned(to plan: RenderPlan) -> RenderRequest {
        var pinned = self
        for index in pinned.messages.indices {
            if let voice = plan.voices[index] { pinned.messages[index].voice = voice.description }
        }
        if let voice = plan.introVoice { pinned.intro?.voice = voice.description }
        if let voice = plan.outroVoice { pinned.outro?.voice = voice.description }
        return pinned
    }
}

/// The providers Chorus has built in, by id: the one list that says which speak offline (engines in this process) and
/// which names a providers file may not take. Each built-in provider's `id` is its case here.
public enum BuiltInProvider: String, Sendable, CaseIterable {
    case piper, flite, espeak, elevenlabs, openai

    /// Speaks on this machine, with no network: free and fast, so its clips are cached locally only
    /// (`VoiceProvider.isLocal`), and its text is normalized unless a conversation says otherwise.
    public var isOffline: Bool {
        switch self {
        case .piper, .flite, .espeak: true
        case .elevenlabs, .openai: false
        }
    }

    /// The ids of the offline ones.
    public static let offline = Set(allCases.filter(\.isOffline).map(\.rawValue))

    /// Names a providers file's entry may not take (`ProvidersFile`): every built-in one but `openai`, which an entry
    /// of that name reconfigures; the others do not speak OpenAI's wire format.
    public static let reserved = Set(allCases.filter { $0 != .openai }.map(\.rawValue))
}

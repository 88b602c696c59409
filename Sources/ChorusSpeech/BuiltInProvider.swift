/// The providers Chorus has built in, by id: the one list that says which speak offline (engines in this process) and
/// which names a providers file may not take. Each built-in provider's `id` is its case here.
public enum BuiltInProvider: String, Sendable, CaseIterable {
    case piper, kokoro, flite, espeak, elevenlabs, openai

    /// Speaks on this machine, with no network: free and fast, so its clips are cached locally only
    /// (`VoiceProvider.isLocal`), and its text is normalized unless a conversation says otherwise.
    public var isOffline: Bool {
        switch self {
        case .piper, .kokoro, .flite, .espeak: true
        case .elevenlabs, .openai: false
        }
    }

    /// Its voices are neural networks' and sound like people (Piper, Kokoro): the first voices speakers without one get.
    public var isNatural: Bool { self == .piper || self == .kokoro }

    /// The ids of the offline ones.
    public static let offline = Set(allCases.filter(\.isOffline).map(\.rawValue))

    /// Where a hosted provider is reached and how the environment configures it, for its speech and its speech-to-text
    /// alike; `nil` for the offline ones.
    public var hosting: Hosting? {
        switch self {
        case .openai: Hosting(baseURL: "https://api.openai.com/v1", baseURLVariable: "OPENAI_BASE_URL", keyVariable: "OPENAI_API_KEY")
        case .elevenlabs: Hosting(baseURL: "https://api.elevenlabs.io", baseURLVariable: "ELEVENLABS_BASE_URL", keyVariable: "ELEVENLABS_API_KEY")
        case .piper, .kokoro, .flite, .espeak: nil
        }
    }

    /// A hosted provider's address and configuration.
    public struct Hosting: Sendable {
        /// Its API's address, unless `baseURLVariable` says another.
        public let baseURL: String
        public let baseURLVariable: String
        /// The environment variable holding its API key.
        public let keyVariable: String

        /// The address `environment` gives, else the default.
        public func baseURL(_ environment: [String: String]) -> String { environment[baseURLVariable] ?? baseURL }
        /// The key `environment` gives.
        public func key(_ environment: [String: String]) -> String? { environment[keyVariable] }
    }

    /// Seconds a hosted provider's request may take, unless told otherwise.
    public static let timeoutSeconds: Int64 = 120

    /// Names a providers file's entry may not take (`ProvidersFile`): every built-in one but `openai`, which an entry
    /// of that name reconfigures, and `kokoro`, which an entry of that name replaces by the user's own server (a
    /// Kokoro-FastAPI a providers file named `kokoro` before Kokoro was built in keeps working); the others do not speak
    /// OpenAI's wire format.
    public static let reserved = Set(allCases.filter { $0 != .openai && $0 != .kokoro }.map(\.rawValue))
}

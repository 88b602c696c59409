import ArgumentParser
import ChorusCommandLine
import ChorusConversation
import ChorusService
import Foundation

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Chorus HTTP service (renders, speech, clips, voices) until SIGTERM or Ctrl-C.",
        discussion: """
            Every option also has an environment variable (shown in brackets); options win. Provider keys come from \
            ELEVENLABS_API_KEY and OPENAI_API_KEY as for the other commands. Without API keys (CHORUS_API_KEYS or \
            --api-keys-file) the service runs open, and only on a loopback host.

            Example:
              CHORUS_API_KEYS=change-me-to-a-long-secret chorus serve --host 0.0.0.0 --port 8080
            """)

    typealias Setting = ServiceConfiguration.Setting

    /// The help of the flag of `setting`: what it does, its default and its variable (`ServiceConfiguration.Setting`).
    private static func help(_ setting: Setting) -> ArgumentHelp {
        let text = setting.help.replacingOccurrences(of: "`", with: "")
        let shown = setting.shownDefault.replacingOccurrences(of: "`", with: "")
        return ArgumentHelp(
            text + (setting.isSwitch || shown == "—" ? "" : ". Default \(shown)") + " [\(setting.environmentVariable)].",
            valueName: String(setting.flag!.dropFirst(2)))
    }

    private static func name(_ setting: Setting) -> NameSpecification { .customLong(String(setting.flag!.dropFirst(2))) }

    // One option per setting with a flag, named, described and read by the settings' table (`Setting`): each is text
    // here, read by `Setting.set` as its environment variable is. `ServiceSettingsTests` checks that every setting
    // with a flag has its option, and that each sets its field.
    @Option(name: name(.host), help: help(.host)) var host: String?
    @Option(name: name(.port), parsing: .unconditional, help: help(.port)) var port: String?
    @Option(name: name(.dataDirectory), help: help(.dataDirectory)) var dataDirectory: String?
    @Option(name: name(.apiKeysFile), help: help(.apiKeysFile)) var apiKeysFile: String?
    @Option(name: name(.rateLimitPerMinute), parsing: .unconditional, help: help(.rateLimitPerMinute)) var rateLimit: String?
    @Option(name: name(.rendersPerKey), parsing: .unconditional, help: help(.rendersPerKey)) var keyRenders: String?
    @Option(name: name(.workers), parsing: .unconditional, help: help(.workers)) var workers: String?
    @Option(name: name(.queueLimit), parsing: .unconditional, help: help(.queueLimit)) var queue: String?
    @Option(name: name(.retentionSeconds), help: help(.retentionSeconds)) var retention: String?
    @Option(name: name(.maxBodyBytes), parsing: .unconditional, help: help(.maxBodyBytes)) var maxBodyMB: String?
    @Option(name: name(.maxMessages), parsing: .unconditional, help: help(.maxMessages)) var maxMessages: String?
    @Option(name: name(.maxMessageCharacters), parsing: .unconditional, help: help(.maxMessageCharacters)) var maxMessageCharacters: String?
    @Option(name: name(.maxTotalCharacters), parsing: .unconditional, help: help(.maxTotalCharacters)) var maxTotalCharacters: String?
    @Option(name: name(.maxClipSeconds), help: help(.maxClipSeconds)) var maxClip: String?
    @Option(name: name(.shutdownTimeoutSeconds), help: help(.shutdownTimeoutSeconds)) var shutdownTimeout: String?
    @Option(name: name(.idleTimeoutSeconds), help: help(.idleTimeoutSeconds)) var idleTimeout: String?
    @Option(name: name(.providerConcurrency), parsing: .unconditional, help: help(.providerConcurrency)) var concurrency: String?
    /// Also `--voice-engine`, its name before 0.3.
    @Option(name: [.customLong(String(Setting.defaultVoices.flag!.dropFirst(2))), .customLong("voice-engine")], help: help(.defaultVoices))
    var defaultVoices: String?
    @Option(name: name(.storage), help: help(.storage)) var storage: String?
    @Flag(name: name(.redirectAudio), help: help(.redirectAudio)) var redirectAudio = false
    @Option(name: name(.database), help: help(.database)) var database: String?
    @Option(name: name(.leaseSeconds), help: help(.leaseSeconds)) var lease: String?
    @Option(name: name(.transcriptionModel), help: help(.transcriptionModel)) var transcriptionModel: String?
    @Option(name: name(.transcriptionModels), help: help(.transcriptionModels)) var transcriptionModels: String?

    @Flag(
        name: .customLong("check"),
        help: "Check the settings (options over the environment), print each with its value and exit: 0 when the service can start with them.")
    var check = false

    /// What each option was given, by setting.
    private var given: [Setting: String] {
        let options: [Setting: String?] = [
            .host: host, .port: port, .dataDirectory: dataDirectory, .apiKeysFile: apiKeysFile, .rateLimitPerMinute: rateLimit,
            .rendersPerKey: keyRenders, .workers: workers, .queueLimit: queue, .retentionSeconds: retention, .maxBodyBytes: maxBodyMB,
            .maxMessages: maxMessages, .maxMessageCharacters: maxMessageCharacters, .maxTotalCharacters: maxTotalCharacters,
            .maxClipSeconds: maxClip, .shutdownTimeoutSeconds: shutdownTimeout, .idleTimeoutSeconds: idleTimeout,
            .providerConcurrency: concurrency, .defaultVoices: defaultVoices, .storage: storage, .redirectAudio: redirectAudio ? "true" : nil,
            .database: database, .leaseSeconds: lease, .transcriptionModel: transcriptionModel, .transcriptionModels: transcriptionModels,
        ]
        return options.compactMapValues { $0 }
    }

    /// `error` with its setting and every setting its reason names (`` `storage` ``) written as flags (as variables
    /// where a setting has no flag).
    static func described(_ error: ConfigurationError) -> String {
        var reason = error.reason
        for setting in Setting.allCases {
            reason = reason.replacingOccurrences(of: "`\(setting.rawValue)`", with: setting.flag ?? setting.environmentVariable)
        }
        let setting = Setting(rawValue: error.setting).map { $0.flag ?? $0.environmentVariable } ?? error.setting
        return "\(setting) \(error.value): \(reason)"
    }

    /// The settings as `--check` prints them: flag (or variable), value.
    static func listing(_ configuration: ServiceConfiguration) -> String {
        let names = Setting.allCases.map { $0.flag ?? $0.environmentVariable }
        let width = names.map(\.count).max() ?? 0
        return zip(Setting.allCases, names).map { setting, name in
            name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + setting.shown(in: configuration)
        }.joined(separator: "\n")
    }

    func run() async throws {
        var configuration: ServiceConfiguration
        do {
            configuration = try ServiceConfiguration(environment: ProcessInfo.processInfo.environment)
            let given = self.given
            for setting in Setting.allCases {
                if let text = given[setting] { try setting.set(text, in: &configuration) }
            }
            try configuration.validate()
        } catch let error as ConfigurationError {
            throw ValidationError(Self.described(error))
        }
        if check {
            print(Self.listing(configuration))
            return
        }
        try await reportingErrors {
            do {
                try await ChorusServer(configuration: configuration).run()
            } catch let error as ConfigurationError {
                Terminal.error(Self.described(error))  // found at start (the data folder in use, the database unusable): not a usage error
                throw ExitCode.failure
            }
        }
    }
}

import ChorusFixtures
import ChorusService
import ChorusTestSupport
import Foundation
import Testing

/// The service's settings are one table (`ServiceConfiguration.Setting`): `chorus serve`'s options, the environment
/// and docs/cli.md are held to it here.
@Suite("chorus serve's settings")
struct ServiceSettingsTests {
    typealias Setting = ServiceConfiguration.Setting

    /// What `chorus serve --check` printed: each setting's flag (or variable) and value.
    static func listed(_ output: String) -> [String: String] {
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") {
            guard let gap = line.range(of: "  ") else { continue }
            values[String(line[..<gap.lowerBound])] = line[gap.upperBound...].trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    /// Every setting at its example value, as the library sets it, shown as `--check` shows it.
    static func expected(in directory: URL) throws -> [String: String] {
        var configuration = try ServiceConfiguration(environment: [:])
        for setting in Setting.allCases {
            try setting.set(setting == .apiKeysFile ? directory.appendingPathComponent(setting.example).path : setting.example, in: &configuration)
        }
        try configuration.validate()
        return Dictionary(uniqueKeysWithValues: Setting.allCases.map { ($0.flag ?? $0.environmentVariable, $0.shown(in: configuration)) })
    }

    @Test("every setting with a flag has its option in chorus serve, and each option sets its setting as the library reads it")
    func flags() async throws {
        let directory = try TemporaryDirectory()
        try "file-key-0123456789abcdef\n".write(
            to: directory.url.appendingPathComponent(Setting.apiKeysFile.example), atomically: true, encoding: .utf8)
        var arguments = ["serve", "--check"]
        for setting in Setting.allCases {
            guard let flag = setting.flag else { continue }
            arguments += setting.isSwitch ? [flag] : [flag, setting.example]
        }
        let run = try await CLI.run(arguments, in: directory.url, environment: ["CHORUS_API_KEYS": Setting.apiKeys.example])
        #expect(run.status == 0, "\(run.stderr)")
        let listed = Self.listed(run.stdout)
        let expected = try Self.expected(in: directory.url)
        for setting in Setting.allCases {
            let name = setting.flag ?? setting.environmentVariable
            #expect(
                listed[name] == expected[name], "\(name): chorus serve --check says \(listed[name] ?? "nothing"), the library \(expected[name] ?? "")"
            )
            #expect(setting.shown(in: .defaults) != expected[name] || setting == .apiKeysFile, "\(name)'s example is its default")
        }
    }

    @Test("every setting's environment variable sets it as its flag does")
    func environment() async throws {
        let directory = try TemporaryDirectory()
        try "file-key-0123456789abcdef\n".write(
            to: directory.url.appendingPathComponent(Setting.apiKeysFile.example), atomically: true, encoding: .utf8)
        let variables = Dictionary(uniqueKeysWithValues: Setting.allCases.map { ($0.environmentVariable, $0.example) })
        let run = try await CLI.run(["serve", "--check"], in: directory.url, environment: variables)
        #expect(run.status == 0, "\(run.stderr)")
        let listed = Self.listed(run.stdout)
        let expected = try Self.expected(in: directory.url)
        #expect(listed == expected)
        // A variable that cannot be read is named as written.
        let bad = try await CLI.run(["serve", "--check"], in: directory.url, environment: ["CHORUS_MAX_MESSAGES": "many"])
        #expect(bad.status == 64 && bad.stderr.contains("CHORUS_MAX_MESSAGES many: is not a whole number"), "\(bad.stderr)")
        let range = try await CLI.run(["serve", "--check", "--max-messages", "0"], in: directory.url)
        #expect(range.status == 64 && range.stderr.contains("--max-messages 0: must be between 1 and 100000"), "\(range.stderr)")
    }

    @Test("docs/cli.md's table of chorus serve's settings is the settings' own")
    func documented() throws {
        let page = try String(contentsOf: Repository.file("docs/cli.md"), encoding: .utf8)
        #expect(
            page.contains(Setting.markdownTable + "\n"),
            "docs/cli.md's table differs from ServiceConfiguration.Setting's; it should read:\n\(Setting.markdownTable)")
    }
}

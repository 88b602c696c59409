import ChorusTestSupport
import Foundation
import Testing

/// The package's shape as docs/internals.md draws it, held to Package.swift and the sources: every import declared,
/// nothing re-exported, every dependency pointing down, test scaffolding out of the product, no target too large.
@Suite("The package's targets")
struct PackageShapeTests {
    struct Target {
        var name: String
        var type: String
        var files: [URL]
        var dependencies: Set<String>
    }

    /// Modules of the toolchain and the system, which no manifest declares.
    static let system: Set<String> = [
        "Foundation", "FoundationNetworking", "FoundationEssentials", "Glibc", "Musl", "Darwin", "Dispatch", "Testing", "XCTest",
        "Synchronization", "AVFoundation", "os",
    ]

    /// The library's layers, lowest first: a target imports only targets of a lower layer (docs/internals.md, Layout).
    static let layers: [String: Int] = [
        "ChorusSupport": 1, "ChorusWire": 1,
        "ChorusAudio": 2, "ChorusText": 2, "ChorusInference": 2, "ChorusOutbound": 2, "ChorusClient": 2,
        "ChorusS3": 3, "ChorusPictures": 3, "ChorusSpeech": 3, "ChorusFixtures": 3, "ChorusCommandLine": 3,
        "ChorusListening": 4,
        "ChorusConversation": 5, "ChorusVoiceMaking": 5,
        "ChorusService": 6,
        "chorus": 7,
    ]

    /// Package.swift's targets as SwiftPM reads them, with their Swift files.
    static func targets() async throws -> [Target] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-dump-package")
        let run = try await ToolRun.run(["swift", "package", "--package-path", Repository.root.path, "--scratch-path", scratch.path, "dump-package"])
        try #require(run.status == 0, "swift package dump-package: \(run.errors.suffix(400))")
        let json = try #require(try JSONSerialization.jsonObject(with: run.data) as? [String: Any])
        return try #require(json["targets"] as? [[String: Any]]).compactMap { target in
            guard let name = target["name"] as? String, let type = target["type"] as? String, type != "system" else { return nil }
            let path = (target["path"] as? String) ?? (type == "test" ? "Tests/\(name)" : "Sources/\(name)")
            let folder = Repository.file(path)
            let files = (FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.allObjects as? [URL] ?? [])
                .filter { $0.pathExtension == "swift" }
            var dependencies = Set<String>()
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                for kind in ["byName", "target", "product"] {
                    if let named = (dependency[kind] as? [Any])?.first as? String { dependencies.insert(named) }
                }
            }
            return Target(name: name, type: type, files: files, dependencies: dependencies)
        }
    }

    /// The modules `file` imports, and whether it re-exports any.
    static func imports(_ file: URL) throws -> (modules: Set<String>, reexports: Bool) {
        let text = try String(contentsOf: file, encoding: .utf8)
        let pattern = try NSRegularExpression(
            pattern:
                #"^(?:@testable |@_exported |public |package |internal |private |fileprivate )*import (?:struct |class |enum |func |protocol )?(\w+)"#,
            options: [.anchorsMatchLines])
        let modules = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
        let reexports = text.split(separator: "\n").contains { $0.drop { $0 == " " }.hasPrefix("@_exported ") }
        return (Set(modules), reexports)
    }

    @Test("every module a target imports is one Package.swift declares for it, and no module re-exports another")
    func importsDeclared() async throws {
        for target in try await Self.targets() {
            var imported = Set<String>()
            for file in target.files {
                let found = try Self.imports(file)
                #expect(!found.reexports, "\(file.lastPathComponent) re-exports a module")
                imported.formUnion(found.modules)
            }
            let undeclared = imported.subtracting(target.dependencies).subtracting(Self.system).subtracting([target.name])
            #expect(undeclared.isEmpty, "\(target.name) imports \(undeclared.sorted()) without declaring them")
        }
    }

    @Test("dependencies point down the layers; the text layer links no C library; the product links no test scaffolding")
    func layered() async throws {
        let targets = try await Self.targets()
        let byName = Dictionary(uniqueKeysWithValues: targets.map { ($0.name, $0) })
        for target in targets {
            guard let layer = Self.layers[target.name] else { continue }
            for dependency in target.dependencies {
                guard let below = Self.layers[dependency] else { continue }
                #expect(below < layer, "\(target.name) (layer \(layer)) depends on \(dependency) (layer \(below))")
            }
        }
        #expect(
            byName["ChorusText"]?.dependencies.allSatisfy { !$0.hasPrefix("C") || $0.hasPrefix("Chorus") } == true, "ChorusText links a C library")
        func closure(_ name: String) -> Set<String> {
            var seen = Set<String>()
            var next = [name]
            while let current = next.popLast() {
                for dependency in byName[current]?.dependencies ?? [] where seen.insert(dependency).inserted { next.append(dependency) }
            }
            return seen
        }
        for product in ["chorus", "ChorusService", "ChorusConversation", "ChorusAudio", "ChorusSpeech", "ChorusListening"] {
            let linked = closure(product)
            #expect(!linked.contains("ChorusFixtures") && !linked.contains("CEbur128"), "\(product) links test scaffolding: \(linked.sorted())")
        }
        for lower in ["ChorusSupport", "ChorusWire", "ChorusAudio", "ChorusText", "ChorusInference", "ChorusOutbound", "ChorusSpeech"] {
            let linked = closure(lower)
            #expect(
                !linked.contains("ChorusListening") && !linked.contains("ChorusConversation")
                    && (lower == "ChorusSpeech" || !linked.contains("ChorusSpeech")),
                "\(lower) reaches above its layer: \(linked.sorted())")
        }
    }

    @Test("no library or program target holds more than a quarter of the source lines (~25 %)")
    func sizes() async throws {
        let targets = try await Self.targets().filter {
            $0.type != "test" && !$0.files.contains { $0.path.contains("/Tests/") || $0.path.contains("/Fuzz/") }
        }
        var lines: [String: Int] = [:]
        for target in targets {
            lines[target.name] = try target.files.reduce(0) {
                $0 + (try String(contentsOf: $1, encoding: .utf8)).split(separator: "\n", omittingEmptySubsequences: false).count
            }
        }
        let total = lines.values.reduce(0, +)
        for (name, count) in lines {
            #expect(Double(count) <= 0.26 * Double(total), "\(name): \(count) of \(total) lines")
        }
    }
}

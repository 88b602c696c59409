public import Foundation

/// Where things are in this repository, for tests that read its files (README, docs, samples, fuzz inputs) or run
/// its helper scripts. The one place that knows where this file sits.
public enum Repository {
    /// The repository's root folder (this file is `Tests/ChorusTestSupport/Repository.swift`).
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `relative` (e.g. `samples/family-chat.json`) from the root.
    public static func file(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    /// A helper script of the test support (`Tests/ChorusTestSupport/<name>`).
    public static func supportScript(_ name: String) -> URL { file("Tests/ChorusTestSupport/\(name)") }
}

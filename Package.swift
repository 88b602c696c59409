// swift-tools-version:6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Chorus",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "ChorusAudio", targets: ["ChorusAudio"]),
        .library(name: "ChorusVoices", targets: ["ChorusVoices"]),
        // Test and benchmark scaffolding (signals, clip encoders, a stub HTTP server); not part of the engine's API.
        .library(name: "ChorusFixtures", targets: ["ChorusFixtures"]),
        .executable(name: "chorus", targets: ["chorus"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.60.0"),
    ],
    targets: [
        // System-library shims: module map + tiny header, nothing else.
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev"])]),
        .systemLibrary(name: "CLame", providers: [.apt(["libmp3lame-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CEbur128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),
        .systemLibrary(name: "CEspeakNG", providers: [.apt(["libespeak-ng-dev", "espeak-ng-data"])]),

        .target(
            name: "ChorusAudio",
            dependencies: ["CFFmpeg", "CLame", "CSndFile", "CEbur128"],
            swiftSettings: strictSettings),
        .target(
            name: "ChorusVoices",
            dependencies: [
                "ChorusAudio",
                "CEspeakNG",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "ChorusFixtures",
            dependencies: ["ChorusAudio", "CSndFile"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "chorus",
            dependencies: [
                "ChorusAudio",
                "ChorusVoices",
                "ChorusFixtures",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings),
        // Referees and assertions the test targets share.
        .target(
            name: "ChorusTestSupport",
            dependencies: ["ChorusAudio", "ChorusFixtures"],
            path: "Tests/ChorusTestSupport",
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusAudioTests",
            dependencies: ["ChorusAudio", "ChorusFixtures", "ChorusTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusVoicesTests",
            dependencies: ["ChorusVoices", "ChorusAudio", "ChorusFixtures", "ChorusTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusCLITests",
            dependencies: ["chorus", "ChorusAudio", "ChorusFixtures", "ChorusTestSupport"],
            swiftSettings: strictSettings),
    ]
)

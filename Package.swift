// swift-tools-version:6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "Chorus",
    // macOS for the service and tools; iOS for ChorusClient (and ChorusWire), which apps use.
    platforms: [.macOS(.v14), .iOS(.v16)],
    products: [
        .library(name: "ChorusAudio", targets: ["ChorusAudio"]),
        .library(name: "ChorusVoices", targets: ["ChorusVoices"]),
        // The JSON the service and its clients exchange (Foundation only).
        .library(name: "ChorusWire", targets: ["ChorusWire"]),
        // Test and benchmark scaffolding (signals, clip encoders, a stub HTTP server); not part of the engine's API.
        .library(name: "ChorusFixtures", targets: ["ChorusFixtures"]),
        .library(name: "ChorusService", targets: ["ChorusService"]),
        // The Swift client for apps: Foundation only.
        .library(name: "ChorusClient", targets: ["ChorusClient"]),
        .executable(name: "chorus", targets: ["chorus"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.60.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // Without its default traits: no swift-configuration (settings come from flags and the environment).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Hummingbird's own dependencies, named for the audio fast path's channel handler (HTTP parts on NIO).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.20.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        // Shared state of several instances (`--database postgres://…`), and TLS settings for it.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.25.0"),
        // The embedded state of one instance (no `--database`): SQLite in the data folder.
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.0"),
        // `swift package generate-documentation` (the DocC catalogs of ChorusAudio, ChorusVoices, ChorusClient; CI's
        // scripts/docs.sh calls the toolchain's docc on the symbol graphs of the build the tests used instead).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
        .systemLibrary(name: "CFlite", providers: [.apt(["flite1-dev"])]),
        // No pkgConfig: gdlib.pc adds -DAVIF_DLL, which SwiftPM refuses with a warning on every build; gd.h needs no flags.
        .systemLibrary(name: "CGD", providers: [.apt(["libgd-dev", "fonts-dejavu-core"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // ONNX Runtime's C API from PyPI's wheels, pinned (scripts/setup-speech.sh writes chorus-onnxruntime.pc).
        .systemLibrary(name: "CONNXRuntime", pkgConfig: "chorus-onnxruntime"),

        .target(name: "ChorusWire", swiftSettings: strictSettings),
        .target(name: "ChorusClient", dependencies: ["ChorusWire"], swiftSettings: strictSettings),
        .target(
            name: "ChorusAudio",
            dependencies: ["ChorusWire", "CFFmpeg", "CLame", "CSndFile", "CEbur128"],
            swiftSettings: strictSettings),
        // Pictures of renders (libgd PNG, SVG) and the player page: a program that only renders audio does not link libgd.
        .target(name: "ChorusPictures", dependencies: ["ChorusAudio", "CGD"], swiftSettings: strictSettings),
        // Calling other servers: the one HTTP client, the retry policy, connection-failure wording, secret
        // redaction, and the hex and date texts HTTP and S3 use. Nothing Chorus-specific.
        .target(
            name: "ChorusOutbound",
            dependencies: [.product(name: "AsyncHTTPClient", package: "async-http-client")],
            swiftSettings: strictSettings),
        // A small S3 client (SigV4, multipart uploads, presigned URLs) on ChorusOutbound; nothing Chorus-specific.
        .target(
            name: "ChorusS3",
            dependencies: [
                "ChorusOutbound",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "ChorusVoices",
            dependencies: [
                "ChorusAudio",
                "ChorusOutbound",
                "CEspeakNG",
                "CFlite",
                "CONNXRuntime",
                "CZlib",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "ChorusService",
            dependencies: [
                "ChorusAudio",
                "ChorusPictures",
                "ChorusOutbound",
                "ChorusS3",
                "ChorusVoices",
                "ChorusWire",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            resources: [.copy("openapi.json")],
            swiftSettings: strictSettings),
        .target(
            name: "ChorusFixtures",
            dependencies: ["ChorusAudio", "CSndFile"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "chorus",
            dependencies: [
                "ChorusAudio",
                "ChorusPictures",
                "ChorusVoices",
                "ChorusService",
                "ChorusFixtures",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings),
        // Fuzzing (Fuzz/): the targets' bodies, which the tests replay over the committed corpus, and
        // `chorus-fuzz`, a replayer of files, and a libFuzzer binary when scripts/fuzz.sh links it with libFuzzer.
        .target(
            name: "ChorusFuzzing",
            // Not ChorusService: request bodies are decoded in ChorusWire, so the fuzz build skips the HTTP stack.
            dependencies: ["ChorusAudio", "ChorusVoices", "ChorusWire"],
            path: "Fuzz/Sources/ChorusFuzzing",
            swiftSettings: strictSettings),
        .executableTarget(name: "chorus-fuzz", dependencies: ["ChorusFuzzing"], path: "Fuzz/Sources/chorus-fuzz"),
        // Referees and assertions the test targets share.
        .target(
            name: "ChorusTestSupport",
            dependencies: ["ChorusAudio", "ChorusFixtures"],
            path: "Tests/ChorusTestSupport",
            exclude: [
                "png_columns.py", "player_check.py", "s3_server.py", "pg_server.py", "tcp_proxy.py", "openai_sdk_check.py",
                "whisper_referee.py",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusAudioTests",
            dependencies: ["ChorusAudio", "ChorusFixtures", "ChorusTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(name: "ChorusWireTests", dependencies: ["ChorusWire"], swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusPicturesTests",
            dependencies: ["ChorusPictures", "ChorusAudio", "ChorusFixtures", "ChorusTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusS3Tests",
            dependencies: ["ChorusS3", "ChorusOutbound", "ChorusFixtures"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusVoicesTests",
            dependencies: ["ChorusVoices", "ChorusAudio", "ChorusWire", "ChorusFixtures", "ChorusTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusServiceTests",
            dependencies: [
                "ChorusService", "ChorusVoices", "ChorusAudio", "ChorusWire", "ChorusS3", "ChorusFixtures", "ChorusTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusClientTests",
            dependencies: [
                "ChorusClient", "ChorusService", "ChorusWire", "ChorusVoices", "ChorusFixtures", "ChorusTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusFuzzingTests",
            dependencies: ["ChorusFuzzing"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusCLITests",
            dependencies: ["chorus", "ChorusAudio", "ChorusService", "ChorusWire", "ChorusFixtures", "ChorusTestSupport"],
            swiftSettings: strictSettings),
    ]
)

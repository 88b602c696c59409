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
        // The conversation engine (`Chorus.render`), the one entry point apps call, and the layers it is made of.
        .library(name: "ChorusConversation", targets: ["ChorusConversation"]),
        .library(name: "ChorusAudio", targets: ["ChorusAudio"]),
        .library(name: "ChorusSpeech", targets: ["ChorusSpeech"]),
        .library(name: "ChorusListening", targets: ["ChorusListening"]),
        .library(name: "ChorusVoiceMaking", targets: ["ChorusVoiceMaking"]),
        .library(name: "ChorusText", targets: ["ChorusText"]),
        .library(name: "ChorusInference", targets: ["ChorusInference"]),
        .library(name: "ChorusOutbound", targets: ["ChorusOutbound"]),
        .library(name: "ChorusSupport", targets: ["ChorusSupport"]),
        // The JSON the service and its clients exchange (Foundation only).
        .library(name: "ChorusWire", targets: ["ChorusWire"]),
        // Test and benchmark scaffolding (signals, clip encoders, a stub HTTP server); not part of the engine's API.
        .library(name: "ChorusFixtures", targets: ["ChorusFixtures"]),
        .library(name: "ChorusService", targets: ["ChorusService"]),
        // The Swift client for apps: Foundation only.
        .library(name: "ChorusClient", targets: ["ChorusClient"]),
        .executable(name: "chorus", targets: ["chorus"]),
        .executable(name: "chorus-bench", targets: ["chorus-bench"]),
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
        // `swift package generate-documentation` (the DocC catalogs of ChorusAudio, ChorusText, ChorusSpeech, ChorusListening, ChorusConversation, ChorusClient; CI's
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

        // What every layer uses: `Locked`, worker pools and the thread budget, hex and dates, the version. Foundation only.
        .target(name: "ChorusSupport", swiftSettings: strictSettings),
        // The JSON the service and its clients exchange (Foundation only).
        .target(name: "ChorusWire", swiftSettings: strictSettings),
        .target(name: "ChorusClient", dependencies: ["ChorusWire", "ChorusSupport"], swiftSettings: strictSettings),
        // The audio engine: decode → process → stitch → encode → waveform and timeline. No conversation, voice or referee.
        .target(
            name: "ChorusAudio",
            dependencies: ["ChorusSupport", "ChorusWire", "CFFmpeg", "CLame", "CSndFile"],
            swiftSettings: strictSettings),
        // Pictures of renders (libgd PNG, SVG) and the player page: a program that only renders audio does not link libgd.
        .target(name: "ChorusPictures", dependencies: ["ChorusAudio", "ChorusWire", "CGD"], swiftSettings: strictSettings),
        // Calling other servers, for voice providers and S3 alike: the one HTTP client, a request sent with its timeout
        // and body cap (`OutboundRequest`), the retry policy and `Retry-After`, concurrency gates, connection-failure
        // wording, secret redaction. Nothing Chorus-specific; each caller maps the failures to its own errors.
        .target(
            name: "ChorusOutbound",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),
        // A small S3 client (SigV4, multipart uploads, presigned URLs) on ChorusOutbound; nothing Chorus-specific.
        .target(
            name: "ChorusS3",
            dependencies: [
                "ChorusOutbound",
                "ChorusSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),
        // Neural networks on ONNX Runtime: the runtime, sessions, tensors, model files and folders, NumPy arrays. It
        // knows no voice and no Whisper.
        .target(name: "ChorusInference", dependencies: ["ChorusSupport", "CONNXRuntime", "CZlib"], swiftSettings: strictSettings),
        // What a text says: normalization, SSML, pauses, lexicons, IPA, sentences and chunks, words aligned on times.
        // No C library.
        .target(name: "ChorusText", dependencies: ["ChorusSupport", "ChorusWire"], swiftSettings: strictSettings),
        // Voices: the provider protocol and registry; Kokoro, Piper, Flite, espeak-ng in process; ElevenLabs, OpenAI and
        // OpenAI-compatible servers over HTTP.
        .target(
            name: "ChorusSpeech",
            dependencies: [
                "ChorusAudio", "ChorusInference", "ChorusOutbound", "ChorusSupport", "ChorusText", "ChorusWire", "CEspeakNG", "CFlite",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),
        // Hearing speech: Whisper in process, hosted transcription (the hosted voices' accounts), a known text aligned.
        .target(
            name: "ChorusListening",
            dependencies: ["ChorusAudio", "ChorusInference", "ChorusSpeech", "ChorusSupport", "ChorusText", "ChorusWire", "CZlib"],
            swiftSettings: strictSettings),
        // Voices made from recordings: a person's speech heard (the speaker model), a Kokoro style searched for, installed
        // with a record of what it was made from.
        .target(
            name: "ChorusVoiceMaking",
            dependencies: [
                "ChorusAudio", "ChorusListening", "ChorusSpeech", "ChorusSupport", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings),
        // The conversation engine apps call: `Chorus`, conversations, the render plan, the pipeline, the caches.
        .target(
            name: "ChorusConversation",
            dependencies: [
                "ChorusAudio", "ChorusListening", "ChorusOutbound", "ChorusSpeech", "ChorusSupport", "ChorusText", "ChorusWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "ChorusService",
            dependencies: [
                "ChorusAudio", "ChorusConversation", "ChorusInference", "ChorusListening", "ChorusOutbound", "ChorusPictures", "ChorusS3",
                "ChorusSpeech", "ChorusSupport", "ChorusText", "ChorusVoiceMaking", "ChorusWire",
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
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            resources: [.copy("openapi.json"), .copy("Studio/studio.html"), .copy("Studio/studio.css"), .copy("Studio/studio.js")],
            swiftSettings: strictSettings),
        .target(
            name: "ChorusFixtures",
            dependencies: ["ChorusAudio", "ChorusSupport", "ChorusWire", "CSndFile", "CEbur128"],
            swiftSettings: strictSettings),
        // What the command-line programs share: status lines, errors to exit statuses, the flags of settings.
        .target(
            name: "ChorusCommandLine",
            dependencies: ["ChorusAudio", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "chorus",
            dependencies: [
                "ChorusAudio", "ChorusCommandLine", "ChorusConversation", "ChorusListening", "ChorusPictures", "ChorusService",
                "ChorusSpeech", "ChorusSupport", "ChorusText", "ChorusVoiceMaking", "ChorusWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings),
        // `chorus-bench`: a render timed against the ffmpeg command line and pydub, synthesis against a stub provider,
        // the voices' speed; its peers and generated clips come from ChorusFixtures, which `chorus` does not link.
        .executableTarget(
            name: "chorus-bench",
            dependencies: [
                "ChorusAudio", "ChorusCommandLine", "ChorusConversation", "ChorusFixtures", "ChorusSpeech",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings),
        // Fuzzing (Fuzz/): the targets' bodies, which the tests replay over the committed corpus, and
        // `chorus-fuzz`, a replayer of files, and a libFuzzer binary when scripts/fuzz.sh links it with libFuzzer.
        // The text layer's fuzz targets, built and replayed with ChorusText alone.
        .target(
            name: "ChorusTextFuzzing", dependencies: ["ChorusText", "ChorusWire"], path: "Fuzz/Sources/ChorusTextFuzzing",
            swiftSettings: strictSettings),
        .target(
            name: "ChorusFuzzing",
            // Not ChorusService: request bodies are decoded in ChorusWire, so the fuzz build skips the HTTP stack.
            dependencies: [
                "ChorusAudio", "ChorusConversation", "ChorusInference", "ChorusListening", "ChorusSpeech", "ChorusText",
                "ChorusTextFuzzing", "ChorusWire",
            ],
            path: "Fuzz/Sources/ChorusFuzzing",
            swiftSettings: strictSettings),
        .executableTarget(name: "chorus-fuzz", dependencies: ["ChorusFuzzing"], path: "Fuzz/Sources/chorus-fuzz"),
        // Referees and assertions the test targets share.
        .target(
            name: "ChorusTestSupport",
            dependencies: ["ChorusAudio", "ChorusFixtures", "ChorusWire"],
            path: "Tests/ChorusTestSupport",
            exclude: [
                "png_columns.py", "player_check.py", "s3_server.py", "pg_server.py", "tcp_proxy.py", "openai_sdk_check.py",
                "whisper_referee.py", "speaker_referee.py",
            ],
            swiftSettings: strictSettings),
        // Speech the voices make for the tests of voices, of listening and of renders (Flite's for the recognizer, Piper's,
        // Kokoro's) and the providers file of the contract: below ChorusListening, so the voices' tests link no recognizer.
        .target(
            name: "ChorusSpeechTestSupport", dependencies: ["ChorusAudio", "ChorusSpeech", "ChorusWire"],
            path: "Tests/ChorusSpeechTestSupport", swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusAudioTests",
            dependencies: ["ChorusAudio", "ChorusFixtures", "ChorusTestSupport", "ChorusWire"],
            swiftSettings: strictSettings),
        .testTarget(name: "ChorusWireTests", dependencies: ["ChorusSupport", "ChorusWire"], swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusPicturesTests",
            dependencies: ["ChorusAudio", "ChorusFixtures", "ChorusPictures", "ChorusTestSupport", "ChorusWire"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusS3Tests",
            dependencies: ["ChorusFixtures", "ChorusOutbound", "ChorusS3"],
            swiftSettings: strictSettings),
        .testTarget(name: "ChorusSupportTests", dependencies: ["ChorusSupport"], swiftSettings: strictSettings),
        // The text layer's tests link no C library, no audio, no ONNX Runtime and no voice.
        .testTarget(
            name: "ChorusTextTests", dependencies: ["ChorusText", "ChorusTextFuzzing", "ChorusWire"], swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusInferenceTests", dependencies: ["ChorusInference", "ChorusFixtures", "ChorusTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(name: "ChorusOutboundTests", dependencies: ["ChorusOutbound"], swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusSpeechTests",
            dependencies: [
                "ChorusSpeech", "ChorusAudio", "ChorusInference", "ChorusText", "ChorusWire", "ChorusFixtures", "ChorusTestSupport",
                "ChorusSpeechTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusListeningTests",
            dependencies: [
                "ChorusListening", "ChorusSpeech", "ChorusAudio", "ChorusText", "ChorusWire", "ChorusSupport", "ChorusFixtures",
                "ChorusTestSupport", "ChorusSpeechTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusVoiceMakingTests",
            dependencies: [
                "ChorusVoiceMaking", "ChorusListening", "ChorusSpeech", "ChorusAudio", "ChorusSupport", "ChorusFixtures", "ChorusTestSupport",
                "ChorusSpeechTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusConversationTests",
            dependencies: [
                "ChorusConversation", "ChorusListening", "ChorusSpeech", "ChorusAudio", "ChorusText", "ChorusOutbound", "ChorusWire",
                "ChorusSupport", "ChorusFixtures", "ChorusTestSupport", "ChorusSpeechTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusServiceTests",
            dependencies: [
                "ChorusAudio", "ChorusConversation", "ChorusFixtures", "ChorusInference", "ChorusListening", "ChorusOutbound", "ChorusS3",
                "ChorusService", "ChorusSpeech", "ChorusSpeechTestSupport", "ChorusTestSupport", "ChorusText", "ChorusWire",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusClientTests",
            dependencies: [
                "ChorusAudio", "ChorusClient", "ChorusConversation", "ChorusFixtures", "ChorusInference", "ChorusListening",
                "ChorusService", "ChorusSpeech", "ChorusTestSupport", "ChorusWire",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusFuzzingTests",
            dependencies: ["ChorusFuzzing"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusCLITests",
            dependencies: [
                "ChorusAudio", "ChorusConversation", "ChorusFixtures", "ChorusInference", "ChorusListening", "ChorusService",
                "ChorusSpeech", "ChorusSupport", "ChorusTestSupport", "ChorusText", "ChorusWire", "chorus",
            ],
            swiftSettings: strictSettings),
    ]
)

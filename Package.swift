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
        .executable(name: "chorus", targets: ["chorus"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // System-library shims: module map + tiny header, nothing else.
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev"])]),
        .systemLibrary(name: "CLame", providers: [.apt(["libmp3lame-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CEbur128", pkgConfig: "libebur128", providers: [.apt(["libebur128-dev"])]),

        .target(
            name: "ChorusAudio",
            dependencies: ["CFFmpeg", "CLame", "CSndFile", "CEbur128"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "chorus",
            dependencies: [
                "ChorusAudio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusAudioTests",
            dependencies: ["ChorusAudio"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ChorusCLITests",
            dependencies: ["chorus", "ChorusAudio"],
            swiftSettings: strictSettings),
    ]
)

// swift-tools-version:6.1
// Benchmarks live in their own package so `swift test` in the main package stays fast.
// Run with: cd Benchmarks && swift package --disable-sandbox benchmark
import PackageDescription

let package = Package(
    name: "ChorusBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Chorus", path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "ChorusBenchmarks",
            dependencies: [
                .product(name: "ChorusAudio", package: "Chorus"),
                .product(name: "ChorusConversation", package: "Chorus"),
                .product(name: "ChorusFixtures", package: "Chorus"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ChorusBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
    ]
)

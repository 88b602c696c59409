import ChorusFuzzing
import Foundation

// `chorus-fuzz TARGET FILE|DIR…` replays inputs through a fuzz target. Linked with libFuzzer (scripts/fuzz.sh links
// the AddressSanitizer build's `chorus-fuzz` with it, and that build carries libFuzzer's coverage instrumentation),
// it is a libFuzzer binary instead when CHORUS_FUZZ_TARGET names the target; libFuzzer's own flags follow.

private func usage() -> Never {
    FileHandle.standardError.write(Data("usage: chorus-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE|DIR…\n".utf8))
    exit(2)
}

/// libFuzzer's `LLVMFuzzerRunDriver(&argc, &argv, callback)`.
private typealias FuzzerDriver =
    @convention(c) (
        UnsafeMutablePointer<CInt>,
        UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

/// The target libFuzzer runs (a C callback captures nothing, so it reads this).
nonisolated(unsafe) private var fuzzed: FuzzTarget?

@main
struct Entry {
    static func main() {
        if let name = ProcessInfo.processInfo.environment["CHORUS_FUZZ_TARGET"] {
            fuzz(name)
        }
        replay()
    }

    /// Hands control to libFuzzer, found by name: scripts/fuzz.sh links it in and exports its driver, a normal build
    /// has none.
    static func fuzz(_ name: String) -> Never {
        guard let target = FuzzTarget(rawValue: name) else { usage() }
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "LLVMFuzzerRunDriver") else {
            FileHandle.standardError.write(Data("chorus-fuzz: this build has no libFuzzer (scripts/fuzz.sh builds one that has)\n".utf8))
            exit(2)
        }
        fuzzed = target
        var count = CommandLine.argc
        var arguments = CommandLine.unsafeArgv
        let driver = unsafeBitCast(symbol, to: FuzzerDriver.self)
        exit(
            driver(&count, &arguments) { data, size in
                fuzzed?.run(size == 0 ? Data() : Data(bytes: data!, count: size))
                return 0
            })
    }

    static func replay() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else { usage() }
        var count = 0
        for path in arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
                : [path]
            for file in files {
                guard let bytes = FileManager.default.contents(atPath: file) else { continue }
                target.run(bytes)
                count += 1
            }
        }
        print("\(target.rawValue): \(count) inputs replayed, none crashed")
    }
}

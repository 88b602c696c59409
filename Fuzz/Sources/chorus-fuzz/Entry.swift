import ChorusFuzzing
import Foundation

// `chorus-fuzz TARGET FILE|DIR…` replays inputs through a fuzz target (a normal build).
// Built by scripts/fuzz.sh with `-sanitize=fuzzer,address -DFUZZING`, it is a libFuzzer binary
// instead: CHORUS_FUZZ_TARGET names the target, and libFuzzer's own flags follow.

private func usage() -> Never {
    FileHandle.standardError.write(Data("usage: chorus-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE|DIR…\n".utf8))
    exit(2)
}

#if FUZZING
/// The target CHORUS_FUZZ_TARGET names, read once.
private let selected: FuzzTarget = {
    guard let name = ProcessInfo.processInfo.environment["CHORUS_FUZZ_TARGET"], let target = FuzzTarget(rawValue: name) else { usage() }
    return target
}()

/// libFuzzer's callback, whichever `main` the linker keeps (libFuzzer's own, or the one below).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selected.run(size == 0 ? Data() : Data(bytes: data!, count: size))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
private func runDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                       _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

// SwiftPM links an executable's entry as `<module>_main`; here it hands control to libFuzzer's driver.
@_cdecl("chorus_fuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    _ = selected
    var count = argc
    var arguments = argv
    return runDriver(&count, &arguments, fuzzOne)
}
#else
@main
struct Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else { usage() }
        var count = 0
        for path in arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let files = isDirectory.boolValue
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
#endif

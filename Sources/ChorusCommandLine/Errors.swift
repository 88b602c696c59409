import ArgumentParser
import ChorusAudio
import Foundation

/// Runs a command body, turning any failure into one line on stderr and an exit status: 1, 64 for a setting out of
/// range (naming its flag, `FlagNames`), 130 when cancelled.
package func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch is CancellationError {
        Terminal.error("cancelled")
        throw ExitCode(130)
    } catch let error as AudioError where error.code == .invalidArgument && FlagNames.byField[error.subject] != nil {
        Terminal.error("\(FlagNames.byField[error.subject]!)\(error.value.map { " \($0)" } ?? ""): \(error.reason)")
        throw ExitCode(64)
    } catch {
        Terminal.error(String(describing: error))
        throw ExitCode.failure
    }
}

package func formatDuration(_ seconds: Double) -> String {
    let total = Int(seconds)
    let fraction = String(format: "%.1f", seconds - Double(total)).dropFirst()
    if total >= 3600 { return String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60) + fraction }
    return String(format: "%d:%02d", total / 60, total % 60) + fraction
}

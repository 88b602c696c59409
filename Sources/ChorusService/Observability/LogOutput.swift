import ChorusSupport
import ChorusWire
import Foundation

/// Standard output for log lines, buffered: lines are collected and written when 32 KB have gathered
/// or a quarter of a second has passed, so logging every request does not cost a system call each.
final class LogOutput: @unchecked Sendable {
    static let standard = LogOutput()

    private let buffer = Locked<[UInt8]>([])
    private let timer: any DispatchSourceTimer

    private init() {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "chorus.log"))
        timer.schedule(deadline: .now() + 0.25, repeating: 0.25)
        timer.setEventHandler { [weak self] in self?.flush() }
        timer.resume()
        atexit { LogOutput.standard.flush() }
    }

    func write(_ line: String) {
        let full = buffer.withLock { buffer in
            buffer.append(contentsOf: line.utf8)
            buffer.append(10)
            return buffer.count >= 32 * 1024
        }
        if full { flush() }
    }

    func flush() {
        let pending = buffer.withLock { buffer in
            let pending = buffer
            buffer.removeAll(keepingCapacity: true)
            return pending
        }
        guard !pending.isEmpty else { return }
        pending.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(STDOUT_FILENO, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

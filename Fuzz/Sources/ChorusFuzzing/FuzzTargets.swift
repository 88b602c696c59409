public import Foundation
import ChorusAudio
import ChorusService
import ChorusVoices
import ChorusWire

/// The fuzz targets: what the engine and the service do with bytes nobody vetted. Each one takes any
/// bytes and must return — with a result or with the error type its API documents — and whatever it
/// returns must be consistent; anything else stops the process (`preconditionFailure`), which
/// libFuzzer records as a crash. `chorus-fuzz` runs them under libFuzzer (`scripts/fuzz.sh`) and
/// replays files through them; the tests replay the committed corpus and every regression input.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// Audio bytes through the decoder the product uses (custom AVIO over memory), natively and resampled.
    case decode
    /// Conversation JSON through the CLI's loader.
    case conversation
    /// Request bodies through the service's budget scan and decoding (renders, speech, OpenAI speech).
    case request
    /// audiowaveform `.dat` bytes through the reader, then written back and coarsened.
    case waveform

    /// Runs the target on `bytes`.
    public func run(_ bytes: Data) {
        switch self {
        case .decode: Self.decode(bytes)
        case .conversation: Self.conversation(bytes)
        case .request: Self.request(bytes)
        case .waveform: Self.waveform(bytes)
        }
    }

    static func decode(_ bytes: Data) {
        for output in [nil, AudioFormat(sampleRate: 22_050, channels: 2)] {
            do {
                let reader = try AudioFileReader(data: bytes, name: "fuzz-input", outputFormat: output)
                let audio = try reader.readAll()
                check(audio.format.sampleRate > 0 && (1...64).contains(audio.format.channels), "decoded format \(audio.format)")
                check(audio.samples.count % audio.format.channels == 0, "samples not a whole number of frames")
                if let output { check(audio.format == output, "asked for \(output), got \(audio.format)") }
            } catch let error as AudioError {
                check(!error.description.isEmpty, "an error without a message")
            } catch {
                preconditionFailure("decode threw \(type(of: error)), not AudioError: \(error)")
            }
        }
    }

    static func conversation(_ bytes: Data) {
        do {
            let conversation = try Conversation.parse(bytes, baseDirectory: URL(fileURLWithPath: "/nonexistent-fuzz-dir"), name: "fuzz.json")
            check(!conversation.messages.isEmpty, "a conversation without messages was accepted")
            check(conversation.messages.allSatisfy { !$0.speaker.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }, "an empty speaker was accepted")
        } catch let error as AudioError {
            check(error.code == .invalidConversation || error.code == .fileNotFound || error.code == .unreadable, "conversation error \(error.code)")
        } catch {
            preconditionFailure("Conversation.parse threw \(type(of: error)), not AudioError: \(error)")
        }
    }

    static func request(_ bytes: Data) {
        /// Decodes as the service does; a ServiceError is an answer (4xx), anything else is a defect.
        func decoded<T: Decodable>(_ kind: T.Type, budget: JSONBudget = JSONBudget()) -> T? {
            do {
                return try HTTPSupport.decode(kind, from: bytes, budget: budget)
            } catch let error as ServiceError {
                check((400..<500).contains(Int(error.status.code)), "a request body answered \(error.status.code)")
                return nil
            } catch {
                preconditionFailure("decoding \(kind) threw \(type(of: error)), not ServiceError: \(error)")
            }
        }
        if let render = decoded(RenderRequest.self, budget: JSONBudget(arrayKey: "messages", maxArrayElements: 1_000)) {
            // The budget counts what the decoder builds: exactly the decoded messages fit, one fewer does not.
            let count = render.messages.count
            check(decoded(RenderRequest.self, budget: JSONBudget(arrayKey: "messages", maxArrayElements: count)) != nil,
                  "the budget refused \(count) messages with a limit of \(count)")
            if count > 0 {
                check(decoded(RenderRequest.self, budget: JSONBudget(arrayKey: "messages", maxArrayElements: count - 1)) == nil,
                      "the budget let \(count) messages through a limit of \(count - 1)")
            }
        }
        _ = decoded(SpeechRequest.self)
        _ = decoded(OpenAISpeechRequest.self)
    }

    static func waveform(_ bytes: Data) {
        let peaks: WaveformPeaks
        do {
            peaks = try WaveformPeaks(datData: bytes)
        } catch let error as AudioError {
            check(error.code == .corrupt, "waveform error \(error.code)")
            return
        } catch {
            preconditionFailure("WaveformPeaks(datData:) threw \(type(of: error)): \(error)")
        }
        check(peaks.data.count == peaks.length * 2 * peaks.channels, "points and data disagree")
        // Written back at 16 bits and read again: the same peaks.
        do {
            let again = try WaveformPeaks(datData: peaks.datData(bits: 16))
            check(again.data == peaks.data && again.channels == peaks.channels && again.sampleRate == peaks.sampleRate
                  && again.samplesPerPixel == peaks.samplesPerPixel, "a .dat written back reads differently")
        } catch {
            preconditionFailure("a .dat written by datData(bits: 16) does not read back: \(error)")
        }
        if peaks.samplesPerPixel <= Int(Int32.max) / 3 {
            let coarse = peaks.coarsened(by: 3)
            check(coarse.length == (peaks.length + 2) / 3, "coarsened by 3: \(coarse.length) points from \(peaks.length)")
        }
    }

    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { preconditionFailure("fuzz invariant: \(message())") }
    }
}

extension FuzzTarget {
    /// Whether `bytes` decode as audio with at least one frame (for checking the seed corpus).
    public static func decodes(_ bytes: Data) -> Bool {
        (try? AudioFileReader(data: bytes, name: "seed").readAll().frameCount).map { $0 > 0 } ?? false
    }
}

public import ChorusInference
import ChorusSpeech
public import Foundation

/// The speaker-embedding model: Resemblyzer's GE2E encoder (a three-layer LSTM over 40 mel bands, 256 numbers per
/// voice), which `scripts/prepare_speaker.py` turns into an ONNX graph in the models folder's `speaker-ge2e/`:
/// `model.onnx` (mel power frames in, a unit-length embedding out) and `model.json` (what it was made from, its
/// features' constants). The one owner of the folder's names and of the features' constants. Only voice creation
/// needs it: a missing or broken model makes that unavailable, nothing else.
public struct SpeakerModel: Sendable, Equatable {
    /// What `scripts/prepare_speaker.py` writes (its REVISION); another revision is prepared again by set-up.
    public static let revision = 1
    /// The folder's name in the models folder.
    public static let folderName = "speaker-ge2e"
    /// Samples a second of the audio it hears.
    public static let sampleRate = 16_000
    /// Mel bands of a frame.
    static let bands = 40
    /// The spectrogram's window and hop (25 ms and 10 ms).
    static let fftSize = 400
    static let hop = 160
    /// Frames one partial embedding hears (1.6 s), and the frames between partials' starts (1.3 partials a second).
    static let partialFrames = 160
    static let partialStep = 77
    /// Numbers in an embedding.
    public static let width = 256

    public let folder: URL
    public var model: URL { folder.appendingPathComponent("model.onnx") }
    public var descriptionFile: URL { folder.appendingPathComponent("model.json") }
    /// The SHA-256 of the weights it was made from.
    public let sourceDigest: String
    /// The file it was made from (`resemblyzer-0.1.4/pretrained.pt`).
    public let source: String
    public let licence: String

    /// The folder in `models` (`ModelFolder.root`).
    public static func folder(in models: URL = ModelFolder.root()) -> URL {
        models.appendingPathComponent(folderName, isDirectory: true)
    }

    /// Reads and checks `folder`.
    /// - Throws: `VoiceError` (`.configuration`) naming the file and what is wrong with it.
    public init(folder: URL = SpeakerModel.folder()) throws {
        self.folder = folder
        let description = folder.appendingPathComponent("model.json")
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent("model.onnx").path) else {
            throw Self.broken("\(folder.path): no speaker-embedding model (model.onnx); run scripts/setup.sh")
        }
        guard let data = try? Data(contentsOf: description),
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw Self.broken("\(description.path): missing or not JSON; run scripts/setup.sh") }
        guard json["chorus_revision"] as? Int == Self.revision else {
            throw Self.broken("\(description.path): made by another revision of scripts/prepare_speaker.py; run scripts/setup.sh")
        }
        let constants: [(String, Int)] = [
            ("sample_rate", Self.sampleRate), ("mel_bands", Self.bands), ("fft_size", Self.fftSize), ("hop", Self.hop),
            ("partial_frames", Self.partialFrames), ("partial_step", Self.partialStep), ("embedding_size", Self.width),
        ]
        for (key, value) in constants where json[key] as? Int != value {
            throw Self.broken("\(description.path): \(key) is not \(value); not the speaker model Chorus reads")
        }
        guard let digest = json["source_sha256"] as? String else { throw Self.broken("\(description.path): no source_sha256") }
        sourceDigest = digest
        source = json["source"] as? String ?? "resemblyzer"
        licence = json["licence"] as? String ?? "not stated"
    }

    static func broken(_ message: String) -> VoiceError { VoiceError(.configuration, provider: SpeakerEncoder.owner, message: message) }
}

import ChorusAudio
import ChorusWire
public import Foundation

extension PlayerPage {
    /// The most audio a page takes inline (as a data URL, a third larger than the file).
    public static let maxInlineAudioBytes = 200 << 20
    /// Peak points per second a page asks for: about 6,000 points for the whole audio, 1–100 per second.
    public static func peaksPerSecond(duration: Double) -> Int {
        max(1, min(100, Int(6_000 / max(duration, 1))))
    }

    /// One self-contained page for an audio file and its render timeline: the audio inline as a data URL,
    /// the peaks from `peaksFile` (audiowaveform `.json` or `.dat`) or computed from the audio, the
    /// timeline inline. It plays when opened from any folder, with no network.
    /// - Throws: `AudioError` naming the file that cannot be read, is not what it should be, or does not
    ///   belong with the audio (a timeline longer than the audio).
    public static func html(audioFile: URL, timelineFile: URL, peaksFile: URL? = nil, title: String? = nil) throws -> String {
        let timelineData = try read(timelineFile, what: "timeline JSON file")
        let timeline: Timeline
        do {
            timeline = try JSONDecoder().decode(Timeline.self, from: timelineData)
        } catch {
            throw AudioError(.unreadable, subject: timelineFile.path, reason: "is not a timeline JSON file (as `chorus render --timeline` writes)")
        }
        let audio = try read(audioFile, what: "audio file")
        guard audio.count <= maxInlineAudioBytes else {
            throw AudioError(
                .invalidArgument, subject: audioFile.path,
                reason: "is too large to put inside one page (at most \(maxInlineAudioBytes >> 20) MB)", value: "\(audio.count) bytes")
        }
        guard let mimeType = audioMIMEType(audio) else {
            throw AudioError(.unsupportedFormat, subject: audioFile.path, reason: "is not MP3, WAV, FLAC, AIFF, M4A or Ogg audio a browser can play")
        }
        let peaks: Data
        if let peaksFile {
            peaks = try pagePeaks(from: peaksFile)
        } else {
            let computed = try WaveformPeaks.compute(fileAt: audioFile, zoom: .pixelsPerSecond(peaksPerSecond(duration: timeline.duration)))
            let seconds = Double(computed.length * computed.samplesPerPixel) / Double(computed.sampleRate)
            // The last point may cover a part pixel: allow one point and a little more.
            let slack = Double(computed.samplesPerPixel) / Double(computed.sampleRate) + 0.05
            if timeline.duration > seconds + slack {
                throw AudioError(
                    .invalidArgument, subject: timelineFile.path,
                    reason: "lasts \(String(format: "%.2f", timeline.duration)) s but \(audioFile.lastPathComponent) only "
                        + "\(String(format: "%.2f", seconds)) s: it is not this audio's timeline")
            }
            peaks = computed.jsonData(bits: 8)
        }
        return html(
            audio: .inline(audio, mimeType: mimeType), peaks: .inline(peaks), timeline: .inline(timelineData),
            title: title ?? audioFile.deletingPathExtension().lastPathComponent)
    }

    /// audiowaveform peaks as the page reads them (JSON), from a `.json` or `.dat` file.
    static func pagePeaks(from file: URL) throws -> Data {
        let data = try read(file, what: "waveform file")
        if let peaks = try? WaveformPeaks(datData: data, name: file.path) { return peaks.jsonData(bits: 8) }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let values = object["data"] as? [Any], values.allSatisfy({ $0 is NSNumber }),
            let bits = object["bits"] as? Int, bits == 8 || bits == 16
        else {
            throw AudioError(.unreadable, subject: file.path, reason: "is not audiowaveform peaks (.json or .dat, as `chorus waveform` writes)")
        }
        return data
    }

    /// The type a browser needs for a data URL, from the first bytes.
    static func audioMIMEType(_ data: Data) -> String? {
        let head = [UInt8](data.prefix(12))
        func starts(_ text: String, at offset: Int = 0) -> Bool {
            let bytes = Array(text.utf8)
            return head.count >= offset + bytes.count && Array(head[offset..<offset + bytes.count]) == bytes
        }
        if starts("ID3") || (head.count >= 2 && head[0] == 0xFF && head[1] & 0xE0 == 0xE0) { return "audio/mpeg" }
        if starts("RIFF") && starts("WAVE", at: 8) { return "audio/wav" }
        if starts("fLaC") { return "audio/flac" }
        if starts("OggS") { return "audio/ogg" }
        if starts("FORM") { return "audio/aiff" }
        if starts("ftyp", at: 4) { return "audio/mp4" }
        return nil
    }

    private static func read(_ file: URL, what: String) throws -> Data {
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw AudioError(.fileNotFound, subject: file.path, reason: "no such \(what)")
        }
        do {
            return try Data(contentsOf: file)
        } catch {
            throw AudioError(.unreadable, subject: file.path, reason: "cannot read the \(what) (\(error.localizedDescription))")
        }
    }
}

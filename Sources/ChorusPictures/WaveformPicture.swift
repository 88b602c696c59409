public import ChorusAudio
public import ChorusWire
public import Foundation

/// A waveform drawn for people: min/max per pixel column (the same peaks as `chorus waveform`, one
/// point per column), each speaker's messages in their own colour, the gaps in a neutral tone, an intro and
/// outro in theirs, a band under the span of a music bed, a time axis with ticks and a legend — or, without a
/// timeline, one colour, as BBC audiowaveform draws it. `svg()` writes it as text; `png()` through libgd.
///
/// ```swift
/// let picture = try WaveformPicture.make(audio: URL(fileURLWithPath: "chat.mp3"), timeline: timeline)
/// try picture.png().write(to: URL(fileURLWithPath: "chat.png"))
/// ```
public struct WaveformPicture: Sendable {
    /// Size and colours.
    public struct Options: Sendable, Equatable {
        public static let widthRange = 100...4_096
        public static let heightRange = 60...1_024

        public var width = 1_200
        public var height = 160
        public var theme = PictureTheme.light

        public init(width: Int = 1_200, height: Int = 160, theme: PictureTheme = .light) {
            self.width = width
            self.height = height
            self.theme = theme
        }

        /// - Throws: `AudioError.invalidArgument` about `width` or `height`.
        public func validate() throws {
            if !Self.widthRange.contains(width) { throw AudioError.invalid("width", width, "must be between 100 and 4096 pixels") }
            if !Self.heightRange.contains(height) { throw AudioError.invalid("height", height, "must be between 60 and 1024 pixels") }
        }
    }

    /// One pixel column: its peaks (16-bit) and whose colour it takes (`nil`: a gap, or the intro or outro when
    /// `bookend`).
    public struct Column: Sendable, Equatable {
        public var low: Int16
        public var high: Int16
        public var speaker: Int?
        public var bookend = false
    }

    public let options: Options
    public let columns: [Column]
    /// Speakers in order of first appearance (their index is their colour).
    public let speakers: [String]
    /// Seconds of audio the picture covers.
    public let duration: Double
    /// Frames per column.
    public let samplesPerPixel: Int
    /// The columns a music bed is heard under, if any.
    public let music: Range<Int>?
    /// Whether the timeline has an intro or outro.
    public let hasBookends: Bool

    /// - Parameters:
    ///   - peaks: one point per column (`samplesPerPixel` = ⌈frames / width⌉).
    ///   - timeline: who speaks where; `nil` draws one colour.
    public init(peaks: WaveformPeaks, frames: Int, timeline: Timeline?, options: Options) {
        self.options = options
        samplesPerPixel = peaks.samplesPerPixel
        duration = AudioFormat(sampleRate: peaks.sampleRate, channels: 1).seconds(frames: frames)
        speakers = timeline?.speakers.map(\.name) ?? []
        let index = Dictionary(uniqueKeysWithValues: speakers.enumerated().map { ($1, $0) })
        let segments = timeline?.segments ?? []
        let bookends = [timeline?.intro, timeline?.outro].compactMap { $0 }.map { $0.startSample..<$0.endSample }
        hasBookends = !bookends.isEmpty
        var cursor = 0
        columns = (0..<peaks.length).map { point in
            let middle = point * peaks.samplesPerPixel + peaks.samplesPerPixel / 2
            var speaker: Int? = timeline == nil ? 0 : nil
            while cursor < segments.count && segments[cursor].endSample <= middle { cursor += 1 }
            if cursor < segments.count, segments[cursor].startSample <= middle { speaker = index[segments[cursor].speaker] }
            let bookend = speaker == nil && bookends.contains { $0.contains(middle) }
            return Column(low: peaks.data[point * 2], high: peaks.data[point * 2 + 1], speaker: speaker, bookend: bookend)
        }
        let spp = max(1, peaks.samplesPerPixel)
        music = timeline?.music.map { min(peaks.length, $0.startSample / spp)..<min(peaks.length, ($0.endSample + spp - 1) / spp) }
    }

    /// Decodes `audio` for its length, then for one point of peaks per column (channels averaged).
    /// - Throws: `AudioError` about the file or the options.
    public static func make(audio url: URL, timeline: Timeline?, options: Options = Options()) throws -> WaveformPicture {
        try options.validate()
        let frames = try timeline?.samples ?? AudioFileReader(url: url).readToEnd { _ in }
        let samplesPerPixel = max(WaveformOptions.minimumSamplesPerPixel, (frames + options.width - 1) / options.width)
        let peaks = try WaveformPeaks.compute(fileAt: url, zoom: .samplesPerPixel(samplesPerPixel))
        return WaveformPicture(peaks: peaks, frames: frames, timeline: timeline, options: options)
    }

    // MARK: Layout shared by the SVG and PNG writers

    /// Rows: the legend (when there are speakers), the waveform, the music band (when there is a bed), the time axis.
    var legendHeight: Int { legend.isEmpty ? 0 : 20 }
    var axisHeight: Int { 18 }
    var waveTop: Int { legendHeight + 2 }
    var waveBottom: Int { options.height - axisHeight - 2 - (music == nil ? 0 : 6) }
    /// The rows of the music band.
    var musicRows: ClosedRange<Int> { (waveBottom + 2)...(waveBottom + 4) }

    /// The legend's entries: the speakers, then the intro and outro and the music when there are.
    var legend: [(name: String, colour: PictureTheme.Colour)] {
        let theme = options.theme
        return speakers.enumerated().map { ($1, theme.speaker($0)) } + (hasBookends ? [("Intro/outro", theme.bookend)] : [])
            + (music == nil ? [] : [("Music", theme.music)])
    }

    /// The vertical extent of column `column` in pixels (at least one pixel, at the centre for silence).
    func extent(of column: Column) -> (top: Int, bottom: Int) {
        let centre = Double(waveTop + waveBottom) / 2
        let scale = Double(waveBottom - waveTop) / 2 / 32_768
        let top = Int((centre - Double(column.high) * scale).rounded())
        let bottom = Int((centre - Double(column.low) * scale).rounded())
        return (min(top, bottom), max(top, bottom))
    }

    /// Tick positions and labels: the smallest step of 1 s … 1 h that keeps labels 80 px apart.
    func ticks() -> [(x: Int, label: String)] {
        guard duration > 0 else { return [] }
        let steps: [Double] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200]
        let pixelsPerSecond = Double(columns.count) / duration
        let step = steps.first { $0 * pixelsPerSecond >= 80 } ?? steps.last!
        return stride(from: 0.0, through: duration, by: step).map { seconds in
            (Int((seconds * pixelsPerSecond).rounded()), Self.clock(seconds))
        }
    }

    /// `m:ss` or `h:mm:ss`.
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let pad = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return total >= 3_600 ? "\(total / 3_600):\(pad(total / 60 % 60)):\(pad(total % 60))" : "\(total / 60):\(pad(total % 60))"
    }

    /// The colour column `column` is drawn in.
    func colour(of column: Column) -> PictureTheme.Colour {
        column.speaker.map(options.theme.speaker) ?? (column.bookend ? options.theme.bookend : options.theme.gap)
    }
}

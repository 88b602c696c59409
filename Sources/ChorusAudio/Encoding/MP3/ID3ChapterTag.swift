/// An ID3v2.3 tag at the start of an MP3 holding its chapters: one `CHAP` frame per chapter
/// (element id, start and end in milliseconds, byte offsets "unknown", a `TIT2` title in UTF-16) and a
/// `CTOC` table of contents listing them in order, as the ID3v2 Chapter Frame Addendum 1.0
/// describes. A `CTOC` lists at most 255 entries, so longer lists get a top-level `CTOC` of
/// child `CTOC`s of up to 255 chapters each.
///
/// Its size depends on the titles only (times are fixed-size fields), so the encoder reserves it
/// before the first audio frame and rewrites it with the final times after the last. Titles that may
/// still grow (a recorded message's, titled by its speaker until it is heard) get room in the tag's
/// padding (zeros after the last frame, counted in the tag's size, as ID3v2 allows): the final titles
/// are written if they fit, the first ones otherwise. Version 2.3, not 2.4, because it is what
/// podcast players and AVFoundation read most widely.
struct ID3ChapterTag {
    let titles: [String]
    /// The whole tag in bytes, header and padding included.
    let size: Int

    /// Bytes of room for one title that may grow into the longest `ChapterTitle.make` gives after
    /// its speaker (`": "`, `maximumCharacters`, `"…"`), at two UTF-16 units a character.
    static let roomPerGrowingTitle = (2 + ChapterTitle.maximumCharacters + 1) * 2 * 2

    /// At most 255 × 255 chapters.
    static let maximumChapters = 255 * 255

    /// - Throws: `AudioError.invalidArgument` for more than `maximumChapters` titles.
    /// - Parameter growing: How many of `titles` may be replaced by longer ones at the end.
    init(titles: [String], growing: Int = 0) throws {
        guard titles.count <= Self.maximumChapters else {
            throw AudioError(
                .invalidArgument, subject: "chapters",
                reason: "\(titles.count) chapters are more than an ID3 table of contents holds (\(Self.maximumChapters))")
        }
        self.titles = titles
        size =
            Self.build(titles: titles, milliseconds: Array(repeating: (0, 0), count: titles.count)).count
            + max(0, min(growing, titles.count)) * Self.roomPerGrowingTitle
    }

    /// The tag with each chapter's `(start, end)` in milliseconds (as many as there are titles), `size`
    /// bytes: `final` titles where given and they fit, the first ones otherwise.
    func bytes(milliseconds: [(Int, Int)], final: [String] = []) -> [UInt8] {
        precondition(milliseconds.count == titles.count, "one time pair per chapter")
        var chosen = titles.indices.map { $0 < final.count ? final[$0] : titles[$0] }
        var built = Self.build(titles: chosen, milliseconds: milliseconds, size: size)
        // Too long for the room kept: the last grown titles go back to their first form, one at a time.
        var index = titles.count - 1
        while built == nil, index >= 0 {
            if chosen[index] != titles[index] {
                chosen[index] = titles[index]
                built = Self.build(titles: chosen, milliseconds: milliseconds, size: size)
            }
            index -= 1
        }
        return built ?? Self.build(titles: titles, milliseconds: milliseconds)
    }

    /// Appends the tag with zero times: the placeholder `write(chapters:sampleRate:into:)` fills in at the end.
    func writePlaceholder(into output: EncodedOutput) throws {
        try output.append(bytes(milliseconds: Array(repeating: (0, 0), count: titles.count)), count: size)
    }

    /// Rewrites the placeholder at the start of `output` with each chapter's times and title (chapters
    /// past the marks get zero times and their first titles).
    func write(chapters: [ChapterMark], sampleRate: Int, into output: EncodedOutput) throws {
        let times = titles.indices.map { index -> (Int, Int) in
            guard index < chapters.count else { return (0, 0) }
            let frames = chapters[index].frames
            return (
                ChapterMark.milliseconds(frames: frames.lowerBound, sampleRate: sampleRate),
                ChapterMark.milliseconds(frames: frames.upperBound, sampleRate: sampleRate)
            )
        }
        try bytes(milliseconds: times, final: chapters.map(\.title)).withUnsafeBytes { try output.overwrite($0, at: 0) }
    }

    /// The tag padded with zeros to `size` bytes in all; `nil` when its frames need more.
    private static func build(titles: [String], milliseconds: [(Int, Int)], size: Int) -> [UInt8]? {
        let tag = build(titles: titles, milliseconds: milliseconds)
        guard tag.count <= size else { return nil }
        return header(frameBytes: size - 10) + tag.dropFirst(10) + [UInt8](repeating: 0, count: size - tag.count)
    }

    private static func build(titles: [String], milliseconds: [(Int, Int)]) -> [UInt8] {
        var frames: [UInt8] = []
        let ids = titles.indices.map { "chp\($0)" }
        for (index, title) in titles.enumerated() {
            var body = cString(ids[index])
            body += uint32(milliseconds[index].0) + uint32(milliseconds[index].1)
            body += [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]  // start and end byte offsets: not given
            body += frame("TIT2", [0x01] + utf16WithBOM(title))
            frames += frame("CHAP", body)
        }
        if ids.count <= 255 {
            frames += tableOfContents(id: "toc", topLevel: true, children: ids)
        } else {
            let groups = stride(from: 0, to: ids.count, by: 255).map { Array(ids[$0..<min(ids.count, $0 + 255)]) }
            let groupIDs = groups.indices.map { "toc\($0)" }
            frames += tableOfContents(id: "toc", topLevel: true, children: groupIDs)
            for (index, group) in groups.enumerated() {
                frames += tableOfContents(id: groupIDs[index], topLevel: false, children: group)
            }
        }
        return header(frameBytes: frames.count) + frames
    }

    /// "ID3", version 2.3.0, no flags, and the size of what follows (frames and padding) in 7-bit bytes.
    private static func header(frameBytes size: Int) -> [UInt8] {
        [0x49, 0x44, 0x33, 3, 0, 0, UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)]
    }

    private static func tableOfContents(id: String, topLevel: Bool, children: [String]) -> [UInt8] {
        var body = cString(id)
        body.append(topLevel ? 0x03 : 0x01)  // bit 1: top level; bit 0: entries are ordered
        body.append(UInt8(children.count))
        for child in children { body += cString(child) }
        return frame("CTOC", body)
    }

    /// A version 2.3 frame: id, size (plain 32-bit big-endian), no flags.
    private static func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + uint32(body.count) + [0, 0] + body
    }

    private static func cString(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }

    private static func uint32(_ value: Int) -> [UInt8] {
        let clamped = UInt32(clamping: value)
        return [UInt8(clamped >> 24), UInt8(clamped >> 16 & 0xFF), UInt8(clamped >> 8 & 0xFF), UInt8(clamped & 0xFF)]
    }

    /// UTF-16 little-endian with its byte-order mark (text encoding 1 of ID3v2.3).
    private static func utf16WithBOM(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in text.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        return bytes
    }
}

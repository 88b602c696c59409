/// Fills in the chapter times of an Ogg stream's header pages after the audio is encoded.
///
/// libavformat writes chapters into the Vorbis comment header (`OpusTags`) as
/// `CHAPTER000=HH:MM:SS.mmm` and `CHAPTER000NAME=title` when the header is written, before any
/// time is known. The times are fixed-width, so the encoder writes the header with zero times,
/// keeps a copy of its pages, and at the end rewrites the time values in place and recomputes each
/// page's CRC; nothing moves, so the rest of the file stays valid.
enum OggChapterTimes {
    /// Rewrites `CHAPTERnnn=` values in `pages` (whole Ogg pages from the start of the file) with
    /// `times[nnn]`, each as long as the value it replaces.
    /// - Throws: `AudioError.encodingFailed` when the pages or the comment header are not what
    ///   libavformat writes, or when a chapter's entry is missing.
    static func patch(_ pages: inout [UInt8], times: [String], subject: String) throws {
        func fail(_ reason: String) -> AudioError {
            AudioError(.encodingFailed, subject: subject, reason: "cannot write the Ogg chapter times: \(reason)")
        }
        // Page bodies, in order, as one byte sequence; `positions[i]` is where its byte i sits in `pages`.
        var body: [UInt8] = []
        var positions: [Int] = []
        var pageStarts: [Int] = []
        var offset = 0
        while offset < pages.count {
            guard offset + 27 <= pages.count, pages[offset..<offset + 4].elementsEqual("OggS".utf8) else {
                throw fail("no Ogg page at byte \(offset)")
            }
            let segments = Int(pages[offset + 26])
            guard offset + 27 + segments <= pages.count else { throw fail("a truncated page at byte \(offset)") }
            let length = pages[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
            let start = offset + 27 + segments
            guard start + length <= pages.count else { throw fail("a truncated page at byte \(offset)") }
            pageStarts.append(offset)
            body += pages[start..<start + length]
            positions += start..<(start + length)
            offset = start + length
        }
        guard let tags = find(Array("OpusTags".utf8), in: body) ?? find(Array("\u{3}vorbis".utf8), in: body) else {
            throw fail("no comment header")
        }
        var cursor = tags + (body[tags] == 3 ? 7 : 8)
        func uint32() throws -> Int {
            guard cursor + 4 <= body.count else { throw fail("the comment header ends early") }
            defer { cursor += 4 }
            return Int(body[cursor]) | Int(body[cursor + 1]) << 8 | Int(body[cursor + 2]) << 16 | Int(body[cursor + 3]) << 24
        }
        cursor += try uint32()  // vendor string
        let count = try uint32()
        var written = Set<Int>()
        for _ in 0..<count {
            let length = try uint32()
            guard cursor + length <= body.count else { throw fail("the comment header ends early") }
            let comment = body[cursor..<cursor + length]
            if let equals = comment.firstIndex(of: UInt8(ascii: "=")) {
                let key = comment[cursor..<equals]
                let digits = key.dropFirst(7)
                if key.starts(with: "CHAPTER".utf8), !digits.isEmpty, digits.allSatisfy({ (48...57).contains($0) }),
                    let index = Int(String(decoding: digits, as: UTF8.self)), index < times.count
                {
                    let value = Array(times[index].utf8)
                    guard value.count == comment.endIndex - equals - 1 else {
                        throw fail("chapter \(index)'s time \(times[index]) does not fit the header's \(comment.endIndex - equals - 1) characters")
                    }
                    for (step, byte) in value.enumerated() { pages[positions[equals + 1 + step]] = byte }
                    written.insert(index)
                }
            }
            cursor += length
        }
        guard written.count == times.count else {
            throw fail("the header holds \(written.count) of \(times.count) chapters")
        }
        for (index, start) in pageStarts.enumerated() {
            let end = index + 1 < pageStarts.count ? pageStarts[index + 1] : pages.count
            pages.replaceSubrange((start + 22)..<(start + 26), with: [0, 0, 0, 0])
            let crc = checksum(pages[start..<end])
            pages.replaceSubrange(
                (start + 22)..<(start + 26),
                with: [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)])
        }
    }

    /// The header pages as a stream gets them: the same pages with the `CHAPTER…` comments left
    /// out of the comment packet (the times are not known while it streams), so the page count,
    /// sequence numbers and serial — and every audio page after them — stay those of the file.
    /// `nil` when the comment packet does not sit in exactly one page.
    static func withoutChapters(_ pages: [UInt8]) -> [UInt8]? {
        var result: [UInt8] = []
        var offset = 0
        var rewritten = false
        while offset + 27 <= pages.count {
            let segments = Int(pages[offset + 26])
            guard offset + 27 + segments <= pages.count else { return nil }
            let lacing = pages[(offset + 27)..<(offset + 27 + segments)]
            let start = offset + 27 + segments
            let end = start + lacing.reduce(0) { $0 + Int($1) }
            guard end <= pages.count else { return nil }
            let body = Array(pages[start..<end])
            let isComment = body.starts(with: "OpusTags".utf8) || body.starts(with: [3] + Array("vorbis".utf8))
            guard isComment else {
                result += pages[offset..<end]
                offset = end
                continue
            }
            // One whole packet in this page: not continued from the last, not continued on the next.
            guard pages[offset + 5] & 1 == 0, lacing.last.map({ $0 < 255 }) ?? false,
                lacing.dropLast().allSatisfy({ $0 == 255 }), let stripped = stripChapters(body)
            else { return nil }
            var table = [UInt8](repeating: 255, count: stripped.count / 255)
            table.append(UInt8(stripped.count % 255))
            var page = Array(pages[offset..<offset + 26]) + [UInt8(table.count)] + table + stripped
            page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            let crc = checksum(page[...])
            page.replaceSubrange(22..<26, with: [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)])
            result += page
            rewritten = true
            offset = end
        }
        return rewritten && offset == pages.count ? result : nil
    }

    /// The comment packet without its `CHAPTERnnn…` comments; `nil` when it does not parse.
    private static func stripChapters(_ packet: [UInt8]) -> [UInt8]? {
        var cursor = packet[0] == 3 ? 7 : 8
        func uint32() -> Int? {
            guard cursor + 4 <= packet.count else { return nil }
            defer { cursor += 4 }
            return Int(packet[cursor]) | Int(packet[cursor + 1]) << 8 | Int(packet[cursor + 2]) << 16 | Int(packet[cursor + 3]) << 24
        }
        func le32(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24 & 0xFF)] }
        let magic = Array(packet[0..<cursor])
        guard let vendorLength = uint32(), cursor + vendorLength <= packet.count else { return nil }
        let vendor = Array(packet[cursor..<cursor + vendorLength])
        cursor += vendorLength
        guard let count = uint32() else { return nil }
        var kept: [[UInt8]] = []
        for _ in 0..<count {
            guard let length = uint32(), cursor + length <= packet.count else { return nil }
            let comment = Array(packet[cursor..<cursor + length])
            cursor += length
            let isChapter = comment.starts(with: "CHAPTER".utf8) && comment.count > 7 && (48...57).contains(comment[7])
            if !isChapter { kept.append(comment) }
        }
        return magic + le32(vendor.count) + vendor + le32(kept.count) + kept.flatMap { le32($0.count) + $0 } + packet[cursor...]
    }

    /// Bytes of the comments `titles` add to the header (keys, times, lengths), to tell in advance
    /// whether the comment packet still fits one page.
    static func commentBytes(titles: [String]) -> Int {
        titles.enumerated().reduce(0) { total, entry in
            let key = "CHAPTER" + String(repeating: "0", count: max(0, 3 - String(entry.offset).count)) + String(entry.offset)
            return total + (4 + key.utf8.count + 1 + 12) + (4 + key.utf8.count + 5 + entry.element.utf8.count)
        }
    }

    /// The Ogg page checksum: CRC-32, polynomial 0x04C11DB7, not reflected, initial value 0.
    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes { crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(byte))] }
        return crc
    }

    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index) << 24
        for _ in 0..<8 { value = value & 0x8000_0000 != 0 ? (value << 1) ^ 0x04C1_1DB7 : value << 1 }
        return value
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}

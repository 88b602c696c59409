/// What the parallel MP3 encoder needs to know about an MPEG audio layer III stream: where its frames
/// are (to keep the frames of each piece that belong to it) and how to rewrite the LAME/Xing tag frame
/// so it describes the joined stream.
package enum MP3Stream {
    private static let kbpsMPEG1: [Int] = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0]
    private static let kbpsMPEG2: [Int] = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0]
    private static let ratesMPEG1 = [44_100, 48_000, 32_000]

    /// Samples per channel in one frame: 1152 for MPEG-1 (32–48 kHz), 576 for MPEG-2 and 2.5 (8–24 kHz).
    package static func samplesPerFrame(sampleRate: Int) -> Int { sampleRate >= 32_000 ? 1152 : 576 }

    /// Length of the layer III frame whose header starts at `offset`; nil when none does (no sync word,
    /// another layer, a reserved or free-format field, or fewer than 4 bytes left).
    package static func frameLength(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Int? {
        guard offset >= 0, offset + 4 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] & 0xE0 == 0xE0 else { return nil }
        let version = (bytes[offset + 1] >> 3) & 3  // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5, 1: reserved
        let layer = (bytes[offset + 1] >> 1) & 3  // 1: layer III
        let bitRateIndex = Int(bytes[offset + 2] >> 4)
        let rateIndex = Int((bytes[offset + 2] >> 2) & 3)
        let padding = Int((bytes[offset + 2] >> 1) & 1)
        guard version != 1, layer == 1, rateIndex < 3, (1...14).contains(bitRateIndex) else { return nil }
        let rate = ratesMPEG1[rateIndex] / (version == 3 ? 1 : version == 2 ? 2 : 4)
        let kbps = version == 3 ? kbpsMPEG1[bitRateIndex] : kbpsMPEG2[bitRateIndex]
        return (version == 3 ? 144 : 72) * kbps * 1000 / rate + padding
    }

    /// Where a layer III frame's main data area begins (after the header, its CRC if any, and the side information),
    /// counted from the frame's first byte, and its `main_data_begin`: how many bytes of main data before that area
    /// (in earlier frames' areas, skipping their headers and side information) the frame's own main data starts.
    /// `bytes` must hold a whole frame at `offset` (`frameLength` not nil).
    package static func mainData(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> (areaStart: Int, begin: Int) {
        let mpeg1 = (bytes[offset + 1] >> 3) & 3 == 3
        let crc = bytes[offset + 1] & 1 == 0
        let mono = bytes[offset + 3] >> 6 == 3
        let side = offset + 4 + (crc ? 2 : 0)
        let sideInfo = mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        let begin = mpeg1 ? Int(bytes[side]) << 1 | Int(bytes[side + 1] >> 7) : Int(bytes[side])
        return (side - offset + sideInfo, begin)
    }

    /// The frame header at `offset` with the highest bit rate of its MPEG version (no padding), and how many bytes
    /// longer that frame is; nil when the frame has a CRC (which covers the header) or is at the highest rate already.
    package static func widened(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> (header: [UInt8], extra: Int)? {
        guard let length = frameLength(bytes, at: offset), bytes[offset + 1] & 1 == 1, bytes[offset + 2] >> 4 != 14 else { return nil }
        var header = Array(bytes[offset..<(offset + 4)])
        header[2] = 14 << 4 | header[2] & 0x0C | header[2] & 0x01  // bit rate index 14, same rate, no padding, private bit kept
        let wide = header.withUnsafeBufferPointer { frameLength($0, at: 0) } ?? length
        return wide > length ? (header, wide - length) : nil
    }

    /// The frames of `bytes`, which must be whole frames and nothing else.
    /// - Throws: `encodingFailed` naming `subject` when something else is found.
    package static func frames(in bytes: [UInt8], subject: String) throws -> [Range<Int>] {
        try bytes.withUnsafeBufferPointer { buffer in
            var frames: [Range<Int>] = []
            var offset = 0
            while offset < buffer.count {
                guard let length = frameLength(buffer, at: offset), offset + length <= buffer.count else {
                    throw AudioError(
                        .encodingFailed, subject: subject,
                        reason: "LAME's output is not whole MP3 frames at byte \(offset) of \(buffer.count)")
                }
                frames.append(offset..<(offset + length))
                offset += length
            }
            return frames
        }
    }

    /// LAME's tag frame `template` (from the encoder of the first piece) rewritten for the whole stream:
    /// frame count, stream size, seek table, end padding, music length and CRC, and the tag's own CRC.
    /// Everything else (encoder, settings, delay) is the same for every piece and stays as LAME wrote it.
    /// - Parameters:
    ///   - frameOffsets: where each audio frame starts, counted from the first audio frame.
    ///   - audioBytes: bytes of all audio frames (the tag frame not included).
    ///   - samples: frames of audio encoded (per channel), so that padding makes the decoded length exact.
    ///   - musicCRC: CRC-16 of all audio frames (`crc16`).
    package static func lameTag(
        template: [UInt8], frameOffsets: [Int], audioBytes: Int, samplesPerFrame: Int, samples: Int,
        musicCRC: UInt16, subject: String
    ) throws -> [UInt8] {
        var tag = template
        // "Info" (CBR) or "Xing" (VBR) right after the side information.
        guard
            let start = (0..<max(0, tag.count - 156)).first(where: { index in
                let word = tag[index..<(index + 4)]
                return word.elementsEqual("Info".utf8) || word.elementsEqual("Xing".utf8)
            })
        else {
            throw AudioError(.encodingFailed, subject: subject, reason: "LAME's tag frame has no Info/Xing header")
        }
        let frameCount = frameOffsets.count
        let delay = Int(tag[start + 141]) << 4 | Int(tag[start + 142]) >> 4
        let padding = frameCount * samplesPerFrame - delay - samples
        guard (0..<4096).contains(padding) else {
            throw AudioError(
                .encodingFailed, subject: subject,
                reason: "\(frameCount) frames cannot hold \(samples) samples after a \(delay)-sample delay")
        }
        let streamBytes = audioBytes + tag.count
        func put32(_ value: Int, at offset: Int) {
            for byte in 0..<4 { tag[offset + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * byte)) }
        }
        put32(frameCount, at: start + 8)
        put32(streamBytes, at: start + 12)
        for percent in 0..<100 {  // byte position of the frame at each percent of the duration, in 256ths
            let offset = frameCount == 0 ? 0 : frameOffsets[percent * frameCount / 100]
            tag[start + 16 + percent] = UInt8(min(255, audioBytes == 0 ? 0 : 256 * offset / audioBytes))
        }
        tag[start + 142] = UInt8(truncatingIfNeeded: (delay & 0xF) << 4 | padding >> 8)
        tag[start + 143] = UInt8(truncatingIfNeeded: padding)
        put32(streamBytes, at: start + 148)
        tag[start + 152] = UInt8(musicCRC >> 8)
        tag[start + 153] = UInt8(musicCRC & 0xFF)
        let tagCRC = tag.withUnsafeBufferPointer { crc16(0, UnsafeBufferPointer(rebasing: $0[0..<(start + 154)])) }
        tag[start + 154] = UInt8(tagCRC >> 8)
        tag[start + 155] = UInt8(tagCRC & 0xFF)
        return tag
    }

    /// CRC-16 as LAME's tag uses it (polynomial 0x8005, reflected, starting from `crc`).
    package static func crc16(_ crc: UInt16, _ bytes: UnsafeBufferPointer<UInt8>) -> UInt16 {
        var crc = crc
        for byte in bytes { crc = (crc >> 8) ^ crcTable[Int((crc ^ UInt16(byte)) & 0xFF)] }
        return crc
    }

    private static let crcTable: [UInt16] = (0..<256).map { index in
        var value = UInt16(index)
        for _ in 0..<8 { value = value & 1 != 0 ? (value >> 1) ^ 0xA001 : value >> 1 }
        return value
    }
}

import CZlib
package import Foundation

/// NumPy's files, read without NumPy: a `.npy` array (format versions 1–3, little-endian float32, C order) and a `.npz`
/// archive of them (a ZIP file, each member stored or deflated; what `numpy.savez` and `savez_compressed` write, and
/// what kokoro-onnx's `voices-v1.0.bin` is). Everything is checked before it is used: a damaged or hostile file is an
/// error naming the file, the member and the reason, never a crash or an allocation the file's header asks for.
package enum NumPyArchive {
    /// One float32 array: its shape and its values in C order.
    package struct Array: Sendable, Equatable {
        package var shape: [Int]
        package var values: [Float]
    }

    /// Why a file could not be read.
    package struct Failure: Error, Equatable, CustomStringConvertible {
        package let description: String
        package init(description: String) { self.description = description }
    }

    /// The most bytes one array may hold (a Kokoro voice is 522 KB; a voices file of dozens of voices, 28 MB).
    package static let mostArrayBytes = 64 << 20
    /// The most members an archive may have.
    package static let mostMembers = 4_096

    /// The arrays of `.npz` archive `data`, by member name without its `.npy` (members of other kinds are left out).
    /// - Throws: `Failure` saying what is wrong, naming the member.
    package static func arrays(ofArchive data: Data) throws -> [String: Array] {
        var result: [String: Array] = [:]
        // The archive's bytes taken once: a voices file of dozens of voices is read member by member from them.
        let bytes = [UInt8](data)
        for member in try members(of: bytes) where member.name.hasSuffix(".npy") {
            let name = String(member.name.dropLast(4))
            do {
                result[name] = try array(ofFile: try contents(of: member, in: bytes))
            } catch let failure as Failure {
                throw Failure(description: "\(member.name): \(failure.description)")
            }
        }
        return result
    }

    /// A `.npy` file (format 1.0, little-endian float32, C order) of `values` shaped `shape`: what `array(ofFile:)`
    /// and NumPy read.
    package static func file(of values: [Float], shape: [Int]) -> Data {
        let dimensions = shape.map(String.init).joined(separator: ", ") + (shape.count == 1 ? "," : "")
        var header = "{'descr': '<f4', 'fortran_order': False, 'shape': (\(dimensions)), }"
        // The magic, version and length (10 bytes) and the header, padded with spaces to a multiple of 64, end in "\n".
        header += String(repeating: " ", count: (64 - (10 + header.utf8.count + 1) % 64) % 64) + "\n"
        var data = Data([0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0, UInt8(header.utf8.count & 0xFF), UInt8(header.utf8.count >> 8)])
        data.append(contentsOf: Swift.Array(header.utf8))
        for value in values { withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }

    /// The array of `.npy` file `data`.
    /// - Throws: `Failure` saying what is wrong.
    package static func array(ofFile data: Data) throws -> Array {
        let bytes = [UInt8](data)
        let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]
        guard bytes.count >= 10, Swift.Array(bytes[0..<6]) == magic else { throw Failure(description: "not a NumPy array (no \\x93NUMPY)") }
        let version = bytes[6]
        let headerLength: Int
        let headerStart: Int
        switch version {
        case 1:
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
            headerStart = 10
        case 2, 3:
            guard bytes.count >= 12 else { throw Failure(description: "truncated in its header") }
            headerLength = (0..<4).reduce(0) { $0 | Int(bytes[8 + $1]) << (8 * $1) }
            headerStart = 12
        default:
            throw Failure(description: "NumPy format version \(version) (1, 2 and 3 are read)")
        }
        guard headerLength <= 65_536, headerStart + headerLength <= bytes.count else { throw Failure(description: "truncated in its header") }
        let header = String(decoding: bytes[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        let descr = try field("descr", in: header)
        guard descr == "'<f4'" || descr == "'|f4'" || descr == "'float32'" else {
            throw Failure(description: "its values are \(descr), not little-endian float32 ('<f4')")
        }
        guard try field("fortran_order", in: header) == "False" else { throw Failure(description: "its values are in Fortran order, not C order") }
        let shapeText = try field("shape", in: header)
        guard shapeText.hasPrefix("("), shapeText.hasSuffix(")") else { throw Failure(description: "its shape \(shapeText) is not a tuple") }
        var shape: [Int] = []
        for part in shapeText.dropFirst().dropLast().split(separator: ",") {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let size = Int(trimmed), size >= 0, size <= mostArrayBytes else {
                throw Failure(description: "its shape \(shapeText) is not sizes")
            }
            shape.append(size)
        }
        let count = try shape.reduce(1) { total, size in
            let (product, overflow) = total.multipliedReportingOverflow(by: size)
            guard !overflow, product * 4 <= mostArrayBytes else {
                throw Failure(description: "shape \(shapeText) is larger than \(mostArrayBytes >> 20) MB")
            }
            return product
        }
        let start = headerStart + headerLength
        guard bytes.count - start == count * 4 else {
            throw Failure(description: "it holds \(bytes.count - start) bytes of values; shape \(shapeText) needs \(count * 4)")
        }
        var values = [Float](repeating: 0, count: count)
        values.withUnsafeMutableBytes { target in
            bytes.withUnsafeBytes { source in target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start...])) }
        }
        #if _endian(big)
        values = values.map { Float(bitPattern: $0.bitPattern.byteSwapped) }
        #endif
        guard values.allSatisfy(\.isFinite) else { throw Failure(description: "it holds values that are not finite numbers") }
        return Array(shape: shape, values: values)
    }

    /// The text of dictionary entry `key` of a `.npy` header (`{'descr': '<f4', 'fortran_order': False, 'shape': (510, 1, 256), }`).
    private static func field(_ key: String, in header: String) throws -> String {
        guard let keyRange = header.range(of: "'\(key)':") else { throw Failure(description: "its header has no \(key)") }
        let rest = header[keyRange.upperBound...].drop { $0 == " " }
        if rest.first == "(" {
            guard let close = rest.firstIndex(of: ")") else { throw Failure(description: "its header's \(key) is not closed") }
            return String(rest[...close])
        }
        let end = rest.firstIndex { $0 == "," || $0 == "}" } ?? rest.endIndex
        return rest[..<end].trimmingCharacters(in: .whitespaces)
    }

    /// A ZIP member: where its data is and how it is kept.
    package struct Member: Equatable {
        package var name: String
        package var method: UInt16
        package var compressedSize: Int
        package var size: Int
        package var localHeader: Int
        package var crc: UInt32
    }

    /// The members listed by `data`'s central directory.
    package static func members(of data: Data) throws -> [Member] { try members(of: [UInt8](data)) }

    private static func members(of bytes: [UInt8]) throws -> [Member] {
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        guard bytes.count >= 22, bytes[0] == 0x50, bytes[1] == 0x4B else { throw Failure(description: "not a NumPy archive (not a ZIP file)") }
        // The end of central directory record: the last signature in the last 64 KB + 22 bytes.
        var end = -1
        var at = bytes.count - 22
        while at >= max(0, bytes.count - 22 - 65_535) {
            if bytes[at] == 0x50, bytes[at + 1] == 0x4B, bytes[at + 2] == 5, bytes[at + 3] == 6 {
                end = at
                break
            }
            at -= 1
        }
        guard end >= 0 else { throw Failure(description: "truncated (no end of the ZIP directory)") }
        let count = u16(end + 10)
        let directorySize = u32(end + 12)
        let directoryStart = u32(end + 16)
        guard count != 0xFFFF, directoryStart != 0xFFFF_FFFF else { throw Failure(description: "a ZIP64 archive (larger than 4 GB; not read)") }
        guard count <= mostMembers else { throw Failure(description: "\(count) members (at most \(mostMembers))") }
        guard directoryStart + directorySize <= end else { throw Failure(description: "truncated (its ZIP directory is cut off)") }
        var members: [Member] = []
        var cursor = directoryStart
        for _ in 0..<count {
            guard cursor + 46 <= end, u32(cursor) == 0x0201_4B50 else { throw Failure(description: "its ZIP directory is damaged") }
            let nameLength = u16(cursor + 28)
            let extraLength = u16(cursor + 30)
            let commentLength = u16(cursor + 32)
            guard cursor + 46 + nameLength <= end else { throw Failure(description: "its ZIP directory is damaged") }
            let name = String(decoding: bytes[(cursor + 46)..<(cursor + 46 + nameLength)], as: UTF8.self)
            members.append(
                Member(
                    name: name, method: UInt16(u16(cursor + 10)), compressedSize: u32(cursor + 20), size: u32(cursor + 24),
                    localHeader: u32(cursor + 42), crc: UInt32(u32(cursor + 16))))
            cursor += 46 + nameLength + extraLength + commentLength
        }
        return members
    }

    /// The bytes of `member` of archive `data`, checked against its CRC-32.
    package static func contents(of member: Member, in data: Data) throws -> Data { try contents(of: member, in: [UInt8](data)) }

    private static func contents(of member: Member, in bytes: [UInt8]) throws -> Data {
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        let header = member.localHeader
        guard header >= 0, header + 30 <= bytes.count, bytes[header] == 0x50, bytes[header + 1] == 0x4B, bytes[header + 2] == 3,
            bytes[header + 3] == 4
        else { throw Failure(description: "its ZIP entry is damaged") }
        let start = header + 30 + u16(header + 26) + u16(header + 28)
        guard member.size <= mostArrayBytes + 65_536, member.compressedSize >= 0, start + member.compressedSize <= bytes.count else {
            throw Failure(description: "truncated (\(member.compressedSize) bytes are listed)")
        }
        let stored = Data(bytes[start..<(start + member.compressedSize)])
        let contents: Data
        switch member.method {
        case 0:
            guard member.size == member.compressedSize else { throw Failure(description: "its ZIP entry's sizes disagree") }
            contents = stored
        case 8:
            contents = try inflate(stored, size: member.size)
        default:
            throw Failure(description: "compressed by ZIP method \(member.method) (stored and deflate are read)")
        }
        let crc = contents.withUnsafeBytes { raw in
            UInt32(truncatingIfNeeded: crc32(0, raw.bindMemory(to: Bytef.self).baseAddress, uInt(raw.count)))
        }
        guard crc == member.crc else { throw Failure(description: "damaged (its CRC-32 does not match)") }
        return contents
    }

    /// Raw deflate `data` inflated to exactly `size` bytes.
    private static func inflate(_ data: Data, size: Int) throws -> Data {
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure(description: "zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var output = Data(count: size)
        var input = data
        let status = input.withUnsafeMutableBytes { source in
            output.withUnsafeMutableBytes { target in
                stream.next_in = source.bindMemory(to: Bytef.self).baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(target.count)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, Int(stream.total_out) == size else { throw Failure(description: "its deflated data is damaged") }
        return output
    }
}

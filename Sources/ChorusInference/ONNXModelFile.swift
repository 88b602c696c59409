package import Foundation

/// What an ONNX model file says about itself — its metadata, graph inputs and outputs — read without loading it:
/// the protocol buffer's fields are walked and the large ones (nodes, weights) skipped by their lengths, so a
/// 100 MB model is checked in microseconds. Every model is read here before the runtime loads it: a file that is not
/// a complete ONNX model, or lacks the inputs, outputs and metadata Chorus reads, is an error naming the file and
/// never reaches the runtime (whose parser is not Chorus's to harden: it is fuzzed here instead).
package struct ONNXModelFile: Sendable {
    package let url: URL
    /// `metadata_props`: what the exporter (or Chorus's preparation) wrote.
    package var metadata: [String: String] = [:]
    package var inputs: [String] = []
    package var outputs: [String] = []
    package var opsetVersion: Int?

    /// The smallest plausible model (a header and a graph); anything smaller is not one.
    package static let minimumSize = 64

    /// Reads `url`'s top-level fields and the graph's input and output names.
    /// - Throws: `InferenceError` (`.model`) naming the file: missing, unreadable, truncated, not ONNX.
    package init(url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw InferenceError.model("\(url.path): cannot be read (\(Self.reason(error)))")
        }
        try self.init(data: data, url: url)
    }

    /// Reads the bytes of the model file `url`.
    /// - Throws: `InferenceError` (`.model`) naming the file: truncated, not ONNX.
    package init(data: Data, url: URL) throws {
        self.url = url
        guard data.count >= Self.minimumSize else {
            throw InferenceError.model("\(url.path): \(data.count) bytes, not an ONNX model")
        }
        try data.withUnsafeBytes { raw in
            var reader = ProtobufReader(bytes: raw.bindMemory(to: UInt8.self), file: url.path)
            var sawGraph = false
            while let (field, value) = try reader.next() {
                switch (field, value) {
                case (7, .bytes(let range)):  // graph
                    sawGraph = true
                    var graph = reader.nested(range)
                    while let (graphField, graphValue) = try graph.next() {
                        guard case .bytes(let info) = graphValue, graphField == 11 || graphField == 12 else { continue }
                        let name = try reader.nested(info).string(field: 1) ?? ""
                        if graphField == 11 { inputs.append(name) } else { outputs.append(name) }
                    }
                case (8, .bytes(let range)):  // opset_import: domain 1, version 2
                    var opset = reader.nested(range)
                    var domain = ""
                    var version: Int?
                    while let (opsetField, opsetValue) = try opset.next() {
                        if opsetField == 1, case .bytes(let text) = opsetValue { domain = reader.text(text) }
                        if opsetField == 2, case .varint(let number) = opsetValue { version = Int(truncatingIfNeeded: number) }
                    }
                    if domain.isEmpty || domain == "ai.onnx" { opsetVersion = version }
                case (14, .bytes(let range)):  // metadata_props: key 1, value 2
                    var entry = reader.nested(range)
                    var key = ""
                    var text = ""
                    while let (entryField, entryValue) = try entry.next() {
                        guard case .bytes(let bytes) = entryValue else { continue }
                        if entryField == 1 { key = reader.text(bytes) } else if entryField == 2 { text = reader.text(bytes) }
                    }
                    metadata[key] = text
                default:
                    continue
                }
            }
            guard sawGraph, opsetVersion != nil else {
                throw InferenceError.model("\(url.path): not an ONNX model (no graph or opset)")
            }
        }
    }

    /// The metadata entries among `keys` that are missing or (for `integers`) not whole numbers.
    package func missing(_ keys: [String], integers: Set<String> = []) -> [String] {
        keys.filter { key in
            guard let value = metadata[key], !value.isEmpty else { return true }
            return integers.contains(key) && Int(value) == nil
        }
    }

    private static func reason(_ error: any Error) -> String {
        if let posix = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        return (error as NSError).localizedDescription
    }
}

/// A reader of protocol buffer fields over bytes in memory: varints, fixed 32/64-bit values (skipped) and
/// length-delimited fields (their byte range). Every length is checked against what is left: a truncated or
/// corrupt file is an error, never a read past the end.
package struct ProtobufReader {
    package enum Value {
        case varint(UInt64)
        case bytes(Range<Int>)
        case fixed
    }

    package let bytes: UnsafeBufferPointer<UInt8>
    package let file: String
    private var position: Int
    private let end: Int

    package init(bytes: UnsafeBufferPointer<UInt8>, file: String, range: Range<Int>? = nil) {
        self.bytes = bytes
        self.file = file
        position = range?.lowerBound ?? 0
        end = range?.upperBound ?? bytes.count
    }

    package func nested(_ range: Range<Int>) -> ProtobufReader { ProtobufReader(bytes: bytes, file: file, range: range) }

    package func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }

    /// The first length-delimited `field` of this message as text.
    package func string(field wanted: Int) throws -> String? {
        var copy = self
        while let (field, value) = try copy.next() {
            if field == wanted, case .bytes(let range) = value { return text(range) }
        }
        return nil
    }

    /// The next field's number and value; `nil` at the end of the message.
    package mutating func next() throws -> (Int, Value)? {
        guard position < end else { return nil }
        let key = try varint()
        let field = Int(truncatingIfNeeded: key >> 3)
        guard field > 0 else { throw corrupt("field number 0") }
        switch key & 7 {
        case 0:
            return (field, .varint(try varint()))
        case 1:
            try skip(8)
            return (field, .fixed)
        case 5:
            try skip(4)
            return (field, .fixed)
        case 2:
            let length = try varint()
            guard length <= UInt64(end - position) else { throw corrupt("a field of \(length) bytes with \(end - position) left (truncated?)") }
            let start = position
            position += Int(length)
            return (field, .bytes(start..<position))
        default:
            throw corrupt("wire type \(key & 7)")
        }
    }

    private mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < end else { throw corrupt("ends inside a number (truncated?)") }
            let byte = bytes[position]
            position += 1
            guard shift < 64 else { throw corrupt("a number longer than 64 bits") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    private mutating func skip(_ count: Int) throws {
        guard end - position >= count else { throw corrupt("ends inside a field (truncated?)") }
        position += count
    }

    private func corrupt(_ what: String) -> InferenceError {
        InferenceError.model("\(file): not a valid ONNX model (\(what) at byte \(position))")
    }
}

extension ONNXModelFile {
    /// Throws unless the graph's inputs and outputs are named `inputs` and `outputs`, in order.
    /// - Throws: `InferenceError` (`.model`) naming the file, `what` it should be and what it has.
    package func expect(inputs expectedInputs: [String], outputs expectedOutputs: [String], what: String) throws {
        guard inputs == expectedInputs, outputs == expectedOutputs else {
            throw InferenceError.model(
                "\(url.path): not \(what) (inputs \(inputs.joined(separator: ", ")); outputs \(outputs.joined(separator: ", ")))")
        }
    }
}

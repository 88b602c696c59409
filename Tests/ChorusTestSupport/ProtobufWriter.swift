public import Foundation

/// Writes the few protocol buffer fields of an ONNX model the checks read (for models that are valid ONNX but
/// not what Chorus needs, or that the runtime refuses).
public enum ProtobufWriter {
    public static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(value & 0x7F)
            value >>= 7
            if value != 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value != 0
        return bytes
    }

    public static func field(_ number: Int, _ bytes: [UInt8]) -> [UInt8] { varint(UInt64(number << 3 | 2)) + varint(UInt64(bytes.count)) + bytes }
    public static func field(_ number: Int, _ text: String) -> [UInt8] { field(number, Array(text.utf8)) }

    public static func model(inputs: [String], outputs: [String], metadata: [String: String]) -> Data {
        var graph: [UInt8] = field(2, "graph")
        for name in inputs { graph += field(11, field(1, name)) }
        for name in outputs { graph += field(12, field(1, name)) }
        var model: [UInt8] = varint(1 << 3) + varint(8)  // ir_version 8
        model += field(8, varint(2 << 3) + varint(17))  // opset_import { version: 17 }
        model += field(7, graph)
        model += field(6, String(repeating: "padding ", count: 8))  // doc_string: past the smallest plausible size
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { model += field(14, field(1, key) + field(2, value)) }
        return Data(model)
    }
}

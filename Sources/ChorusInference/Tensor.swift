package import CONNXRuntime
import Foundation

/// A value a network can be given: a tensor Chorus made (`Tensor`) or one a network gave (`OutputTensor`, such as
/// Whisper's encoder output handed to its decoder as it is).
package protocol TensorValue: AnyObject, Sendable {
    /// The runtime's `OrtValue`.
    var value: OpaquePointer { get }
}

/// The element types Chorus gives networks.
package protocol TensorElement: Sendable {
    static var onnxType: ONNXTensorElementDataType { get }
    static var zero: Self { get }
}

extension Float: TensorElement {
    package static var onnxType: ONNXTensorElementDataType { ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT }
}

extension Int64: TensorElement {
    package static var onnxType: ONNXTensorElementDataType { ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 }
}

/// A tensor in memory Chorus owns: allocated (zeroed) when this is made, the runtime's view of it made over it (no
/// copy), both freed when this goes. Its elements may be written between runs (a cache filled in place).
package final class Tensor<Element: TensorElement>: TensorValue, @unchecked Sendable {
    package let shape: [Int]
    package let elements: UnsafeMutableBufferPointer<Element>
    package let value: OpaquePointer
    private let runtime: ONNXRuntime

    /// A tensor of `shape` holding zeros, or `values` (as many as the shape holds).
    /// - Throws: `InferenceError` (`.run`) when the runtime cannot describe it.
    package init(shape: [Int], values: [Element]? = nil) throws {
        let runtime = try ONNXRuntime.shared()
        let count = shape.reduce(1, *)
        precondition(shape.allSatisfy { $0 >= 0 } && (values == nil || values!.count == count), "a tensor's values fill its shape")
        self.runtime = runtime
        self.shape = shape
        let elements = UnsafeMutableBufferPointer<Element>.allocate(capacity: max(1, count))
        if let values {
            _ = elements.initialize(from: values)
        } else {
            elements.initialize(repeating: .zero)
        }
        var made: OpaquePointer?
        let dimensions = shape.map(Int64.init)
        let status = dimensions.withUnsafeBufferPointer { dims in
            runtime.api.pointee.CreateTensorWithDataAsOrtValue(
                runtime.memory, elements.baseAddress, count * MemoryLayout<Element>.stride,
                dims.baseAddress, dims.count, Element.onnxType, &made)
        }
        do {
            try runtime.check(status, "making a tensor of shape \(shape)", owner: "onnxruntime")
        } catch {
            elements.deallocate()
            throw error
        }
        self.elements = elements
        value = made!
    }

    deinit {
        runtime.api.pointee.ReleaseValue(value)
        elements.deallocate()
    }

    /// The runtime's view of item `index` along the first dimension (shape 1 × the rest), over this tensor's memory (no
    /// copy): one window of a batch given to a network alone. Keeps this tensor alive.
    /// - Throws: `InferenceError` (`.run`) when the runtime cannot describe it.
    package func item(_ index: Int) throws -> TensorItem<Element> { try TensorItem(of: self, at: index) }
}

/// One item of a `Tensor` along its first dimension, as a tensor of its own over the same memory.
package final class TensorItem<Element: TensorElement>: TensorValue, @unchecked Sendable {
    package let value: OpaquePointer
    private let whole: Tensor<Element>
    private let runtime: ONNXRuntime

    fileprivate init(of whole: Tensor<Element>, at index: Int) throws {
        precondition(!whole.shape.isEmpty && (0..<whole.shape[0]).contains(index), "an item within the tensor")
        let runtime = try ONNXRuntime.shared()
        let shape = [1] + whole.shape.dropFirst()
        let count = shape.reduce(1, *)
        var made: OpaquePointer?
        let dimensions = shape.map(Int64.init)
        let status = dimensions.withUnsafeBufferPointer { dims in
            runtime.api.pointee.CreateTensorWithDataAsOrtValue(
                runtime.memory, whole.elements.baseAddress! + index * count,
                count * MemoryLayout<Element>.stride, dims.baseAddress, dims.count,
                Element.onnxType, &made)
        }
        try runtime.check(status, "making a view of shape \(shape)", owner: "onnxruntime")
        self.whole = whole
        self.runtime = runtime
        value = made!
    }

    deinit { runtime.api.pointee.ReleaseValue(value) }
}

/// A tensor a network gave: the runtime's memory, read through `floats` while this lives; released with this.
package final class OutputTensor: TensorValue, @unchecked Sendable {
    package let value: OpaquePointer
    package let shape: [Int]
    package let element: ONNXTensorElementDataType
    private let data: UnsafeMutableRawPointer?
    private let runtime: ONNXRuntime

    package init(owning value: OpaquePointer, runtime: ONNXRuntime, owner: String) throws {
        self.value = value
        self.runtime = runtime
        let api = runtime.api.pointee
        do {
            var info: OpaquePointer?
            try runtime.check(api.GetTensorTypeAndShape(value, &info), "reading an output's shape", owner: owner)
            defer { api.ReleaseTensorTypeAndShapeInfo(info) }
            guard let info else { throw InferenceError(.run, owner: owner, message: "an output without a shape") }
            shape = try TensorShape.dimensions(of: info, runtime: runtime, owner: owner)
            element = try TensorShape.element(of: info, runtime: runtime, owner: owner)
            var data: UnsafeMutableRawPointer?
            try runtime.check(api.GetTensorMutableData(value, &data), "reading an output", owner: owner)
            self.data = data
        } catch {
            api.ReleaseValue(value)
            throw error
        }
    }

    deinit { runtime.api.pointee.ReleaseValue(value) }

    /// How many elements it holds.
    package var count: Int { shape.reduce(1, *) }

    /// `body` given its elements as floats (empty unless it holds floats). The runtime's memory is freed with this, so
    /// it is read only inside `body`, while this is kept alive (a pointer kept past the last use of this reads freed
    /// memory: the runtime's allocator hands it to the next run).
    package func withFloats<Result>(_ body: (UnsafeBufferPointer<Float>) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(self) {
            guard element == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, let data else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
            return try body(UnsafeBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: count))
        }
    }

    /// Its elements as floats, copied (empty unless it holds floats).
    package var floatArray: [Float] { withFloats { Array($0) } }
}

/// Reading a tensor description's element type and dimensions.
package enum TensorShape {
    package static func dimensions(of info: OpaquePointer, runtime: ONNXRuntime, owner: String) throws -> [Int] {
        let api = runtime.api.pointee
        var rank = 0
        try runtime.check(api.GetDimensionsCount(info, &rank), "reading a tensor's rank", owner: owner)
        var dimensions = [Int64](repeating: 0, count: rank)
        try runtime.check(
            dimensions.withUnsafeMutableBufferPointer { api.GetDimensions(info, $0.baseAddress, rank) },
            "reading a tensor's dimensions", owner: owner)
        return dimensions.map { Int($0) }
    }

    package static func element(of info: OpaquePointer, runtime: ONNXRuntime, owner: String) throws -> ONNXTensorElementDataType {
        var element = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED
        try runtime.check(runtime.api.pointee.GetTensorElementType(info, &element), "reading a tensor's element type", owner: owner)
        return element
    }
}

/// Element types as errors name them.
package enum TensorElementName {
    package static func of(_ element: ONNXTensorElementDataType) -> String {
        switch element {
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return "float"
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return "float16"
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return "int64"
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return "int32"
        case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return "int8"
        default: return "type \(element.rawValue)"
        }
    }
}

extension InferenceSession.Port {
    /// A float port named `name` of `shape` (-1 where it varies).
    package static func float(_ name: String, _ shape: [Int]) -> Self { Self(name: name, element: ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, shape: shape) }
    /// A 64-bit integer port.
    package static func int64(_ name: String, _ shape: [Int]) -> Self { Self(name: name, element: ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, shape: shape) }
}

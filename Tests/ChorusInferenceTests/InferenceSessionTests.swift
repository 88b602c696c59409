import ChorusFixtures
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusInference

/// Sessions on ONNX Runtime as `InferenceSession` makes them (this test was `WhisperTests`' before the runtime had a target of
/// its own: Whisper's int8 weights are where the kernel's saturation showed).
@Suite("ONNX Runtime sessions")
struct InferenceSessionTests {
    /// ONNX Runtime's fastest int8 kernel on x86 without VNNI (AVX2 only) adds each pair of unsigned × signed byte
    /// products in 16 bits, saturating past 32,767: 255 × 127 twice is 64,770. Whisper's int8 weights reach ±127, and on
    /// such a host tiny.en heard 364 words of the human corpus wrong instead of 300, until `InferenceSession` asked for
    /// the runtime's exact mode. A product of 64 such pairs must come out whole (2,072,640; saturated: 1,048,544). On a
    /// processor whose kernel is exact anyway (VNNI), this passes either way.
    @Test("int8 products are exact on every processor: pairs that saturate AVX2's fast kernel come out whole")
    func int8ProductsExact() async throws {
        let python = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/chorus/setup/converter-venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "scripts/setup.sh prepares the converter's Python")
        let scratch = try TemporaryDirectory(prefix: "chorus-int8")
        let file = scratch.file("product.onnx")
        let write = """
            import sys, numpy as np, onnx
            from onnx import TensorProto, helper, numpy_helper
            weight = numpy_helper.from_array(np.full((64, 1), 127, dtype=np.int8), "w")
            graph = helper.make_graph(
                [helper.make_node("Cast", ["x"], ["xq"], to=TensorProto.UINT8),
                 helper.make_node("MatMulInteger", ["xq", "w"], ["p"]),
                 helper.make_node("Cast", ["p"], ["y"], to=TensorProto.FLOAT)],
                "product", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])], [weight])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
            model.ir_version = 8
            onnx.checker.check_model(model)
            onnx.save(model, sys.argv[1])
            """
        let made = try await ToolRun.run([python.path, "-c", write, file.path])
        try #require(made.status == 0, "\(made.errors.suffix(600))")
        for threads in [InferenceSession.Threads.own(1), .shared] {
            let session = try InferenceSession(file: file, bytes: try Data(contentsOf: file), threads: threads, owner: "whisper")
            let output = try session.run([("x", try Tensor(shape: [1, 64], values: [Float](repeating: 255, count: 64)))], outputs: ["y"])
            #expect(output[0].floatArray == [2_072_640], "\(threads): \(output[0].floatArray)")
        }
    }
}

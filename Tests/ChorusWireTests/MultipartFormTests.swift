import ChorusWire
import Foundation
import Testing

@Suite("multipart/form-data")
struct MultipartFormTests {
    static let boundary = "----chorus7MA4YWxkTrZu0gW"

    /// A body as OpenAI's SDKs send a transcription request: fields, a binary file whose bytes hold CRLF, dashes and
    /// a near-boundary, and a repeated field.
    static func body(file: [UInt8]) -> Data {
        var data = Data()
        func field(_ name: String, _ value: String) {
            data.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
        }
        field("model", "whisper-1")
        data.append(
            Data(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"voice note.m4a\"\r\nContent-Type: audio/mp4\r\n\r\n".utf8)
        )
        data.append(contentsOf: file)
        data.append(Data("\r\n".utf8))
        field("timestamp_granularities[]", "word")
        field("timestamp_granularities[]", "segment")
        data.append(Data("--\(boundary)--\r\n".utf8))
        return data
    }

    @Test("fields, a binary file holding CRLF and dashes, and repeated fields come back exactly")
    func parts() throws {
        let file: [UInt8] = [0, 0, 0, 0x18] + Array("ftypM4A \r\n--\r\n--\(Self.boundary.dropLast())\r\n".utf8) + (0..<256).map { UInt8($0) }
        let form = try MultipartForm(
            body: Self.body(file: file), boundary: try MultipartForm.boundary(of: "multipart/form-data; boundary=\(Self.boundary)"))
        #expect(form.parts.map(\.name) == ["model", "file", "timestamp_granularities[]", "timestamp_granularities[]"])
        #expect(try form.text("model") == "whisper-1")
        let upload = try #require(form.part("file"))
        #expect(upload.filename == "voice note.m4a" && upload.contentType == "audio/mp4")
        #expect(form.data(of: upload) == Data(file))
        #expect(try form.texts("timestamp_granularities[]") == ["word", "segment"])
        #expect(try form.text("language") == nil)
    }

    @Test("a body that is a slice of a larger buffer reads the same")
    func slice() throws {
        let whole = Data("junk".utf8) + Self.body(file: Array("abc".utf8))
        let form = try MultipartForm(body: whole.dropFirst(4), boundary: Self.boundary)
        #expect(form.data(of: try #require(form.part("file"))) == Data("abc".utf8))
    }

    @Test("Content-Type: quoted boundary, parameters in any case; another type, no boundary or an overlong one are errors")
    func contentTypes() throws {
        #expect(try MultipartForm.boundary(of: "multipart/form-data; charset=utf-8; BOUNDARY=\"a b:c\"") == "a b:c")
        for (header, reason) in [
            ("application/json", "not multipart/form-data"), ("multipart/form-data", "no boundary"),
            ("multipart/form-data; boundary=" + String(repeating: "x", count: 71), "1 to 70"),
        ] {
            #expect(throws: MultipartError.self) { try MultipartForm.boundary(of: header) }
            do { _ = try MultipartForm.boundary(of: header) } catch let error as MultipartError { #expect(error.reason.contains(reason), "\(error)") }
        }
    }

    @Test("preamble and epilogue are ignored", arguments: ["preamble\r\n", ""])
    func preamble(_ preamble: String) throws {
        let body = Data(preamble.utf8) + Self.body(file: [1, 2, 3]) + Data("epilogue bytes".utf8)
        #expect(try MultipartForm(body: body, boundary: Self.boundary).parts.count == 4)
    }

    @Test("truncated, foreign-boundary, nameless, header-flooding and part-flooding bodies are errors naming the part")
    func refusals() throws {
        func reason(_ body: Data, limits: MultipartForm.Limits = .init()) -> String {
            do {
                _ = try MultipartForm(body: body, boundary: Self.boundary, limits: limits)
                return "accepted"
            } catch let error as MultipartError {
                return error.reason
            } catch {
                return "\(error)"
            }
        }
        let whole = Self.body(file: Array(repeating: 7, count: 1000))
        #expect(reason(whole.prefix(whole.count - 30)).contains("part 4 (\"timestamp_granularities[]\") has no closing boundary"))
        #expect(reason(whole.prefix(150)) == "part 2: the headers never end (truncated?)", "\(reason(whole.prefix(150)))")
        #expect(reason(Data("--other\r\n\r\n".utf8)).contains("never occurs"))
        #expect(reason(Data()).contains("never occurs"))
        #expect(reason(Data("--\(Self.boundary)--\r\n".utf8)) == "no part")
        #expect(
            reason(Data("--\(Self.boundary)\r\nContent-Type: text/plain\r\n\r\nx\r\n--\(Self.boundary)--".utf8)).contains(
                "part 1: no Content-Disposition"))
        #expect(
            reason(Data("--\(Self.boundary)\r\nContent-Disposition: attachment; name=\"x\"\r\n\r\nx\r\n--\(Self.boundary)--".utf8)).contains(
                "not form-data"))
        let flood = "--\(Self.boundary)\r\nX-Pad: " + String(repeating: "a", count: 10_000) + "\r\n\r\nx\r\n--\(Self.boundary)--"
        #expect(reason(Data(flood.utf8)).contains("headers longer than 8192 bytes"))
        #expect(reason(whole, limits: .init(maxParts: 3)).contains("more than 3 parts"))
        #expect(reason(Data("--\(Self.boundary)XYZ".utf8)).contains("breaks after a boundary"))
    }

    @Test("bodies built to defeat a naive search (megabytes of near-boundaries) are split in one pass")
    func adversarial() throws {
        let near = Array("\r\n--\(Self.boundary.dropLast())".utf8)
        var content: [UInt8] = []
        content.reserveCapacity(4_000_000)
        while content.count < 4_000_000 { content += near }
        let form = try MultipartForm(body: Self.body(file: content), boundary: Self.boundary)
        #expect(form.data(of: try #require(form.part("file"))).count == content.count)
    }

    @Test("a line break inside a header is refused; a quote followed by a combining mark is still a quote; the writer's form reads back")
    func headerText() throws {
        func parse(_ disposition: String) throws -> MultipartForm {
            try MultipartForm(
                body: Data("--\(Self.boundary)\r\nContent-Disposition: \(disposition)\r\n\r\nx\r\n--\(Self.boundary)--".utf8), boundary: Self.boundary
            )
        }
        #expect(throws: MultipartError("part 1: a header holds a line break")) { try parse("form-data; name=\"file\"; filename=\"a\rb\nc\"") }
        let marked = try parse("form-data; name=\"file\"; filename=\"\u{301}e.m4a\"")
        #expect(marked.parts.first?.filename == "\u{301}e.m4a")
        var writer = MultipartForm.Writer(boundary: "w")
        writer.add("file", data: Data([0, 13, 10, 45, 45]), filename: "\u{301}say \"hi\" \\.m4a", contentType: "audio/mp4")
        writer.add("model", "whisper-1")
        let form = try MultipartForm(body: writer.finished(), boundary: "w")
        #expect(
            form.parts.map(\.name) == ["file", "model"] && form.parts[0].filename == "\u{301}say \"hi\" \\.m4a"
                && form.parts[0].contentType == "audio/mp4")
        #expect(try form.data(of: form.parts[0]) == Data([0, 13, 10, 45, 45]) && form.text("model") == "whisper-1")
    }
}

import Foundation
import Testing

@testable import ChorusS3

/// The signer against AWS's published examples: the Signature Version 4 test suite (`get-vanilla`, …; service
/// `service`, 2015-08-30) and the S3 API reference's worked examples (GET with a range, PUT with a body,
/// bucket sub-resources, a presigned URL; bucket `examplebucket`, 2013-05-24). Any error in canonicalization,
/// key derivation or encoding changes every one of these signatures.
@Suite("SigV4 signing")
struct SigV4Tests {
    static let suite = SigV4Signer(
        credentials: S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1", service: "service")
    static let suiteDate = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
    static let s3 = SigV4Signer(
        credentials: S3Credentials(accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        region: "us-east-1")
    static let s3Date = Date(timeIntervalSince1970: 1_369_353_600)  // 2013-05-24T00:00:00Z
    static let s3Host = "examplebucket.s3.amazonaws.com"

    static func authorization(_ headers: [(String, String)]) -> String { headers.first { $0.0 == "Authorization" }?.1 ?? "" }

    @Test(
        "the test suite's vanilla requests",
        arguments: [
            ("GET", [(String, String)](), "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
            ("GET", [("Param2", "value2"), ("Param1", "value1")], "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
            ("POST", [], "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
            ("POST", [("Param1", "value1")], "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"),
        ])
    func suiteVectors(method: String, query: [(String, String)], signature: String) {
        let headers = Self.suite.sign(
            method: method, host: "example.amazonaws.com", path: "/", query: query, headers: [],
            payloadHash: SigV4Signer.emptyPayloadHash, date: Self.suiteDate)
        #expect(headers.first { $0.0 == "x-amz-date" }?.1 == "20150830T123600Z")
        #expect(
            Self.authorization(headers) == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                + "SignedHeaders=host;x-amz-date, Signature=\(signature)")
    }

    @Test("S3: GET an object's first ten bytes")
    func getObject() {
        let headers = Self.s3.sign(
            method: "GET", host: Self.s3Host, path: "/test.txt",
            headers: [("Range", "bytes=0-9"), ("x-amz-content-sha256", SigV4Signer.emptyPayloadHash)],
            payloadHash: SigV4Signer.emptyPayloadHash, date: Self.s3Date)
        #expect(
            Self.authorization(headers) == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        )
    }

    @Test("S3: PUT an object whose key needs encoding, with a body")
    func putObject() {
        let hash = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"  // SHA-256 of "Welcome to Amazon S3."
        let path = SigV4Signer.encodePath("test$file.text")
        #expect(path == "/test%24file.text")
        let headers = Self.s3.sign(
            method: "PUT", host: Self.s3Host, path: path,
            headers: [
                ("Date", "Fri, 24 May 2013 00:00:00 GMT"), ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
                ("x-amz-content-sha256", hash),
            ],
            payloadHash: hash, date: Self.s3Date)
        #expect(
            Self.authorization(headers).hasSuffix(
                "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"
            ))
    }

    @Test(
        "S3: bucket sub-resources and listing parameters",
        arguments: [
            ([("lifecycle", "")], "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"),
            ([("max-keys", "2"), ("prefix", "J")], "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
        ])
    func bucketVectors(query: [(String, String)], signature: String) {
        let headers = Self.s3.sign(
            method: "GET", host: Self.s3Host, path: "/", query: query,
            headers: [("x-amz-content-sha256", SigV4Signer.emptyPayloadHash)],
            payloadHash: SigV4Signer.emptyPayloadHash, date: Self.s3Date)
        #expect(Self.authorization(headers).hasSuffix("Signature=\(signature)"))
    }

    @Test("S3: a presigned GET valid for a day")
    func presigned() {
        let query = Self.s3.presignedQuery(method: "GET", host: Self.s3Host, path: "/test.txt", expires: 86_400, date: Self.s3Date)
        #expect(
            query == "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
                + "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
                + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
    }

    @Test("keys are encoded byte by byte, slashes kept in paths and encoded in queries")
    func encoding() {
        #expect(SigV4Signer.encodePath("renders/ab c/é~.mp3") == "/renders/ab%20c/%C3%A9~.mp3")
        #expect(SigV4Signer.encode("a/b+c=d&e", slash: true) == "a%2Fb%2Bc%3Dd%26e")
        #expect(SigV4Signer.canonicalQuery([("b", "2"), ("a", "1"), ("A", "0"), ("a", "0")]) == "A=0&a=0&a=1&b=2")
        #expect(SigV4Signer.canonicalHeaders([("X-B", "  two   words "), ("x-b", "more"), ("Host", "h")]).text == "host:h\nx-b:two words,more\n")
    }

    @Test("a session token is signed and sent")
    func sessionToken() {
        var credentials = S3Credentials(accessKeyID: "AK", secretAccessKey: "secret-value")
        credentials.sessionToken = "token-value"
        let signer = SigV4Signer(credentials: credentials, region: "eu-west-1")
        let headers = signer.sign(method: "GET", host: "h", path: "/", headers: [], payloadHash: SigV4Signer.emptyPayloadHash, date: Self.s3Date)
        #expect(headers.contains { $0.0 == "x-amz-security-token" && $0.1 == "token-value" })
        #expect(Self.authorization(headers).contains("SignedHeaders=host;x-amz-date;x-amz-security-token"))
        #expect(!"\(credentials)".contains("secret-value") && !"\(credentials)".contains("token-value"))
        #expect(!String(reflecting: credentials).contains("secret-value"))
    }
}

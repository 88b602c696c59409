import Foundation
import Testing

@testable import ChorusS3

/// `--storage s3://…` and the AWS environment, read the way AWS's SDKs read them.
@Suite("S3 location")
struct S3LocationTests {
    static let keys = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "shh-secret"]

    @Test("an endpoint means path-style requests to it; none means AWS's virtual-hosted style in the region")
    func addressing() throws {
        let local = try S3Location(
            url: "s3://audio-bucket/chorus/prod/", environment: Self.keys.merging(["AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9000/"]) { $1 })
        #expect(local.pathStyle && local.origin == "http://127.0.0.1:9000" && local.host == "127.0.0.1:9000")
        #expect(local.prefix == "chorus/prod" && local.region == "us-east-1")
        #expect(local.path(local.key("renders/a b.mp3")) == "/audio-bucket/chorus/prod/renders/a%20b.mp3")
        #expect(local.path(nil) == "/audio-bucket")

        let generic = try S3Location(
            url: "s3://audio-bucket", environment: Self.keys.merging(["AWS_ENDPOINT_URL": "https://xyz.example.com:443"]) { $1 })
        #expect(generic.host == "xyz.example.com" && generic.origin == "https://xyz.example.com" && generic.prefix == "")
        #expect(generic.path(generic.key("x")) == "/audio-bucket/x")
        // Supabase Storage's S3 endpoint has a path of its own, in front of /bucket/key.
        let supabase = try S3Location(
            url: "s3://audio-bucket/chats", environment: Self.keys.merging(["AWS_ENDPOINT_URL_S3": "https://abc.supabase.co/storage/v1/s3/"]) { $1 })
        #expect(supabase.origin == "https://abc.supabase.co" && supabase.basePath == "/storage/v1/s3")
        #expect(
            supabase.path(supabase.key("a.mp3")) == "/storage/v1/s3/audio-bucket/chats/a.mp3" && supabase.path(nil) == "/storage/v1/s3/audio-bucket")

        let aws = try S3Location(url: "s3://audio-bucket/p", environment: Self.keys.merging(["AWS_REGION": "eu-west-1"]) { $1 })
        #expect(
            !aws.pathStyle && aws.host == "audio-bucket.s3.eu-west-1.amazonaws.com" && aws.origin == "https://audio-bucket.s3.eu-west-1.amazonaws.com"
        )
        #expect(aws.path(aws.key("x")) == "/p/x")
        #expect(
            try S3Location(url: "s3://audio-bucket", environment: Self.keys.merging(["AWS_DEFAULT_REGION": "ap-south-1"]) { $1 }).region
                == "ap-south-1")
    }

    @Test(
        "unusable settings name the variable (none for the URL itself) and the reason",
        arguments: [
            ("http://bucket/x", [String: String](), String?.none),
            ("s3://Bad_Bucket", [:], nil),
            ("s3://ab", [:], nil),
            ("s3://bucket/a/../b", [:], nil),
            ("s3://bucket", ["AWS_ACCESS_KEY_ID": ""], "AWS_ACCESS_KEY_ID"),
            ("s3://bucket", ["AWS_SECRET_ACCESS_KEY": ""], "AWS_SECRET_ACCESS_KEY"),
            ("s3://bucket", ["AWS_ENDPOINT_URL_S3": "ftp://host"], "AWS_ENDPOINT_URL_S3"),
            ("s3://bucket", ["AWS_ENDPOINT_URL": "http://host/path?x=1"], "AWS_ENDPOINT_URL"),
            ("s3://bucket", ["AWS_ENDPOINT_URL_S3": "http://user:hunter2@host"], "AWS_ENDPOINT_URL_S3"),
        ])
    func refused(url: String, overrides: [String: String], setting: String?) {
        #expect {
            try S3Location(url: url, environment: Self.keys.merging(overrides) { $1 })
        } throws: { error in
            guard let error = error as? S3LocationError else { return false }
            return error.setting == setting && !error.description.contains("shh-secret") && !error.description.contains("hunter2")
        }
    }

    @Test("the secret shows in no description of the location")
    func secretHidden() throws {
        let location = try S3Location(url: "s3://audio-bucket", environment: Self.keys)
        #expect(!"\(location)".contains("shh-secret") && !String(reflecting: location).contains("shh-secret"))
        #expect(location.description == "s3://audio-bucket")
    }
}

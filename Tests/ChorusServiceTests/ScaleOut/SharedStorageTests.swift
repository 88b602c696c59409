import AsyncHTTPClient
import ChorusFixtures
import ChorusS3
import ChorusTestSupport
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import ChorusService

/// Two service instances, each with its own data folder, sharing one storage (`--storage`): a folder both mount,
/// or a bucket on a real S3-compatible server (moto, checking every request's signature).
@Suite("Service: shared storage across instances", .enabled("needs moto's S3 server (pip install 'moto[server]')") { await S3TestServer.shouldRun })
struct SharedStorageTests {
    enum Backend: String, CaseIterable, Sendable { case folder, s3 }

    /// A shared storage setting and the environment it needs, fresh for each test.
    static func storage(_ backend: Backend, shared folder: TemporaryDirectory, server: S3TestServer.Mode = .checked)
        async throws -> (setting: String, environment: [String: String])
    {
        switch backend {
        case .folder:
            return (folder.file("shared").path, [:])
        case .s3:
            let environment = try await S3TestServer.running(server).environment
            let setting = "s3://\(S3TestServer.uniqueBucket("shared"))/chorus"
            try await S3Client(location: try S3Location(url: setting, environment: environment)).createBucket()
            return (setting, environment)
        }
    }

    static func instance(_ setting: String, _ environment: [String: String], redirect: Bool = false) throws -> TestService {
        try TestService { configuration in
            configuration.storage = setting
            configuration.environment = environment
            configuration.redirectAudio = redirect
        }
    }

    @Test("a render finished on A is found, served in ranges, reused and deleted through B", arguments: Backend.allCases)
    func renderAcrossInstances(backend: Backend) async throws {
        let folder = try TemporaryDirectory()
        let (setting, environment) = try await Self.storage(backend, shared: folder)
        let a = try Self.instance(setting, environment)
        let b = try Self.instance(setting, environment)
        let request = textRequest(["Dinner is at seven tonight.", "I will bring the salad."])
        let made = try await a.test { client in
            let created = try await client.call(.post, "/v1/renders", json: request)
            #expect(created.status == .created, "\(created.text)")
            let manifest = try created.decode(RenderManifest.self)
            let audio = try await client.call(.get, "/v1/renders/\(manifest.id)/audio")
            let timeline = try await client.call(.get, "/v1/renders/\(manifest.id)/timeline")
            let waveform = try await client.call(.get, "/v1/renders/\(manifest.id)/waveform?samples_per_pixel=512")
            return (manifest, audio.data, audio.headers[.eTag], timeline.data, waveform.data)
        }
        let (manifest, audio, etag, timeline, waveform) = made
        #expect(audio.count > 10_000 && etag != nil)

        try await b.test { client in
            let found = try await client.call(.get, "/v1/renders/\(manifest.id)")
            #expect(found.status == .ok, "\(found.text)")
            let foundManifest = try found.decode(RenderManifest.self)
            #expect(foundManifest.status == .done && foundManifest.duration == manifest.duration && foundManifest.samples == manifest.samples)
            let whole = try await client.call(.get, "/v1/renders/\(manifest.id)/audio")
            #expect(whole.status == .ok && whole.data == audio && whole.headers[.eTag] == etag)
            let first = try await client.call(.get, "/v1/renders/\(manifest.id)/audio", headers: [.range: "bytes=0-1"])
            #expect(first.status == .partialContent && first.data == audio.prefix(2) && first.headers[.contentRange] == "bytes 0-1/\(audio.count)")
            let suffix = try await client.call(.get, "/v1/renders/\(manifest.id)/audio", headers: [.range: "bytes=-1000"])
            #expect(suffix.status == .partialContent && suffix.data == audio.suffix(1000))
            let open = try await client.call(.get, "/v1/renders/\(manifest.id)/audio", headers: [.range: "bytes=5000-"])
            #expect(open.status == .partialContent && open.data == audio.dropFirst(5000))
            #expect(try await client.call(.get, "/v1/renders/\(manifest.id)/audio", headers: [.ifNoneMatch: etag!]).status == .notModified)
            #expect(try await client.call(.get, "/v1/renders/\(manifest.id)/timeline").data == timeline)
            #expect(try await client.call(.get, "/v1/renders/\(manifest.id)/waveform?samples_per_pixel=512").data == waveform)
            // The same request on B: the existing render (200), not a new one (201).
            let again = try await client.call(.post, "/v1/renders", json: request)
            let againID = try again.decode(RenderManifest.self).id
            #expect(again.status == .ok && againID == manifest.id)
            #expect(try await client.call(.delete, "/v1/renders/\(manifest.id)").status == .noContent)
        }
        // Gone from the shared storage: a third instance does not find it.
        let c = try Self.instance(setting, environment)
        let missing = try await c.test { client in try await client.call(.get, "/v1/renders/\(manifest.id)").status }
        #expect(missing == .notFound)
        let store = try SharedStorage.make(setting, redirectAudio: false, environment: environment)
        for file in ["render.json", "audio.mp3", "timeline.json", "captions.vtt", "waveform.dat"] {
            #expect(try await store.blobs.size("renders/\(manifest.id)/\(file)") == nil)
        }
        for service in [a, b, c] { #expect(!service.logs.text.contains(environment["AWS_SECRET_ACCESS_KEY"] ?? "no secret here")) }
    }

    @Test("a clip uploaded to A is used by a render on B", arguments: Backend.allCases)
    func clipAcrossInstances(backend: Backend) async throws {
        let folder = try TemporaryDirectory()
        let (setting, environment) = try await Self.storage(backend, shared: folder)
        let a = try Self.instance(setting, environment)
        let b = try Self.instance(setting, environment)
        let note = try await ClipAndVoiceRouteTests.voiceNote(seconds: 1.5)
        let info = try await a.test { client in
            let uploaded = try await client.call(.post, "/v1/clips", body: note)
            #expect(uploaded.status == .created, "\(uploaded.text)")
            return try uploaded.decode(ClipInfo.self)
        }
        try await b.test { client in
            let render = try await client.call(
                .post, "/v1/renders",
                json: #"""
                    {"messages": [{"speaker": "Mom", "clip": "\#(info.id)"}, {"speaker": "Kid", "text": "Okay."}], "output": {"format": "wav"}}
                    """#)
            #expect(render.status == .created, "\(render.text)")
            let segments = try render.decode(RenderManifest.self).timeline!.segments
            #expect(segments.first?.source == "clip:\(info.id)" && abs(segments[0].end - segments[0].start - 1.5) < 0.01)
        }
    }

    /// moto's `open` server: it cannot verify presigned URLs while it checks signatures (SigV4Tests checks the signature).
    @Test("--redirect-audio answers 302 to a presigned URL that serves the same bytes, after authentication")
    func redirect() async throws {
        let folder = try TemporaryDirectory()
        let (setting, environment) = try await Self.storage(.s3, shared: folder, server: .open)
        let service = try Self.instance(setting, environment, redirect: true)
        try await service.test { client in
            let created = try await client.call(.post, "/v1/renders", json: textRequest(["Redirected audio."]))
            let manifest = try created.decode(RenderManifest.self)
            #expect(try await client.call(.get, "/v1/renders/\(manifest.id)/audio", key: nil).status == .unauthorized)
            let answer = try await client.call(.get, "/v1/renders/\(manifest.id)/audio")
            #expect(answer.status == .found)
            let location = try #require(answer.headers[.location])
            #expect(
                location.contains("X-Amz-Signature=") && location.contains("X-Amz-Expires=3600")
                    && !location.contains(environment["AWS_SECRET_ACCESS_KEY"]!))
            let fetched = try await HTTPClient.shared.execute(HTTPClientRequest(url: location), timeout: .seconds(10))
            #expect(fetched.status == .ok)
            let bytes = Data(buffer: try await fetched.body.collect(upTo: 10 << 20))
            let local = try Data(
                contentsOf: service.configuration.dataDirectory.appendingPathComponent(
                    "renders/\(manifest.id)/\(manifest.format == "mp3" ? "audio.mp3" : "audio.\(manifest.format!)")"))
            #expect(bytes == local)
        }
    }

    @Test("shared storage that cannot be reached: 503 storage_unavailable with Retry-After, nothing left behind, no secret told")
    func unavailable() async throws {
        let refusing = try RefusingPort()  // connections refused, and the port kept from other tests' servers
        let port = refusing.port
        defer { _ = refusing }
        let environment = [
            "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "unreachable-secret-77", "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:\(port)",
        ]
        let service = try Self.instance("s3://down-bucket/chorus", environment)
        try await service.test { client in
            let render = try await client.call(.post, "/v1/renders", json: textRequest(["Nobody will hear this."]))
            #expect(
                render.status == .serviceUnavailable && render.errorCode == "storage_unavailable" && render.headers[.retryAfter] != nil,
                "\(render.text)")
            #expect(!render.text.contains("127.0.0.1") && !render.text.contains("unreachable-secret"))
            let clip = try await client.call(.post, "/v1/clips", body: try await ClipAndVoiceRouteTests.voiceNote(seconds: 1))
            #expect(clip.status == .serviceUnavailable && clip.errorCode == "storage_unavailable")
            let unknown = try await client.call(.get, "/v1/renders/\(String(repeating: "ab", count: RenderIdentity.length / 2))")
            #expect(unknown.status == .serviceUnavailable)
        }
        // The failed render left no audio behind to be served later.
        let renders = service.configuration.dataDirectory.appendingPathComponent("renders")
        for id in (try? FileManager.default.contentsOfDirectory(atPath: renders.path)) ?? [] {
            let files = try FileManager.default.contentsOfDirectory(atPath: renders.appendingPathComponent(id).path)
            #expect(!files.contains { $0.hasPrefix("audio") }, "\(files)")
        }
        #expect(!service.logs.text.contains("unreachable-secret"))
        #expect(service.logs.text.contains("cannot reach http://127.0.0.1:\(port)"))
    }

    /// On moto's `open` server: its signature check rejects a `/` in a query value, which every listing has
    /// (boto3's own listing fails there the same way).
    @Test("retention sweeps the shared storage of expired renders and clips, whichever instance made them", arguments: Backend.allCases)
    func sweep(backend: Backend) async throws {
        let folder = try TemporaryDirectory()
        let (setting, environment) = try await Self.storage(backend, shared: folder, server: .open)
        let shared = try SharedStorage.make(setting, redirectAudio: false, environment: environment)
        let now = Date().timeIntervalSince1970
        let (old, young, orphan) = (Self.id("a"), Self.id("b"), Self.id("c"))
        let (oldClip, youngClip) = (String(repeating: "a", count: 64), String(repeating: "b", count: 64))
        for (id, clip, expiresAt) in [(old, oldClip, now - 1), (young, youngClip, now + 3600)] {
            try await Self.publish(id, in: shared, expiresAt: expiresAt, now: now)
            try await shared.publishClip(clip, audio: Data("c".utf8), record: Data(#"{"expiresAt": \#(expiresAt)}"#.utf8))
        }
        try await shared.blobs.put(Data("orphan".utf8), name: "renders/\(orphan)/audio.mp3", contentType: "audio/mpeg")
        let removed = try await shared.sweep(now: now)
        #expect(removed.renders == 1 && removed.clips == 1)
        #expect(
            try await shared.blobs.list(prefix: "") == [
                "clips/\(youngClip).audio", "clips/\(youngClip).json", "renders/\(young)/audio.mp3",
                "renders/\(young)/render.json", "renders/\(orphan)/audio.mp3",
            ])
    }

    @Test("unusable storage settings are refused at start, naming the setting")
    func configuration() throws {
        var redirectOnly = try ServiceConfiguration(environment: [:])
        redirectOnly.redirectAudio = true
        #expect(throws: ConfigurationError.self) { try redirectOnly.validate() }
        #expect { try SharedStorage.make("relative/folder", redirectAudio: false, environment: [:]) } throws: { error in
            (error as? ConfigurationError)?.setting == "storage"
        }
        #expect { try SharedStorage.make("s3://bucket-name", redirectAudio: false, environment: [:]) } throws: { error in
            (error as? ConfigurationError)?.setting == "AWS_ACCESS_KEY_ID"
        }
    }

    static func id(_ digit: Character) -> String { String(repeating: digit, count: RenderIdentity.length) }

    /// A render record and its audio, as an instance publishes them.
    static func publish(
        _ id: String, in shared: SharedStorage, expiresAt: Double, now: Double, format: String = "mp3",
        recordID: String? = nil
    ) async throws {
        var manifest = RenderManifest(id: recordID ?? id, status: .done, createdAt: "", expiresAt: "")
        manifest.format = format
        let stored = StoredRender(manifest: manifest, etag: "\"x\"", audioBytes: 1, createdAt: now - 10, expiresAt: expiresAt)
        try await shared.blobs.put(Data("a".utf8), name: "renders/\(id)/audio.mp3", contentType: "audio/mpeg")
        try await shared.blobs.put(try JSONEncoder().encode(stored), name: "renders/\(id)/render.json", contentType: "application/json")
    }

    @Test(
        "records in the shared storage are not trusted as paths: a forged format (the audio's name follows from it) or id, or missing audio, is no render"
    )
    func forgedRecords() async throws {
        let folder = try TemporaryDirectory()
        let (setting, environment) = try await Self.storage(.folder, shared: folder)
        let shared = try SharedStorage.make(setting, redirectAudio: false, environment: environment)
        let now = Date().timeIntervalSince1970
        let (traversal, otherID, missing, good) = (Self.id("1"), Self.id("2"), Self.id("3"), Self.id("4"))
        try await Self.publish(traversal, in: shared, expiresAt: now + 3600, now: now, format: "../../signing.key")
        try await Self.publish(otherID, in: shared, expiresAt: now + 3600, now: now, recordID: good)
        try await Self.publish(missing, in: shared, expiresAt: now + 3600, now: now)
        try await shared.blobs.delete("renders/\(missing)/audio.mp3")
        try await Self.publish(good, in: shared, expiresAt: now + 3600, now: now)
        let service = try Self.instance(setting, environment)
        let statuses = try await service.test { client in
            var statuses: [Int] = []
            for id in [traversal, otherID, missing, good] { statuses.append(Int(try await client.call(.get, "/v1/renders/\(id)/audio").status.code)) }
            return statuses
        }
        #expect(statuses == [404, 404, 404, 200], "\(statuses)")
        // The folder store refuses names that would leave it.
        let store = FolderBlobStore(root: folder.file("shared"))
        await #expect(throws: StorageError.self) { try await store.put(Data("x".utf8), name: "../escaped", contentType: "text/plain") }
        await #expect(throws: StorageError.self) { try await store.delete("renders/../../x") }
        #expect(try await store.read("../shared/renders/\(good)/audio.mp3") == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.file("escaped").path))
    }

    @Test("a render of several MB is read through B a chunk at a time, byte for byte, whole and in a long range", arguments: Backend.allCases)
    func largeAcrossInstances(backend: Backend) async throws {
        let folder = try TemporaryDirectory()
        let (setting, environment) = try await Self.storage(backend, shared: folder)
        let a = try Self.instance(setting, environment)
        let b = try Self.instance(setting, environment)
        let (id, audio) = try await a.test { client in
            let clip = try await client.call(.post, "/v1/clips", body: try await ClipAndVoiceRouteTests.voiceNote(seconds: 40)).decode(ClipInfo.self)
            let manifest = try await client.call(
                .post, "/v1/renders",
                json: #"""
                    {"messages": [{"speaker": "Mom", "clip": "\#(clip.id)"}], "output": {"format": "wav"}}
                    """#
            ).decode(RenderManifest.self)
            return (manifest.id, try await client.call(.get, "/v1/renders/\(manifest.id)/audio").data)
        }
        #expect(audio.count > 3 * 1_048_576)
        try await b.test { client in
            let whole = try await client.call(.get, "/v1/renders/\(id)/audio")
            #expect(whole.status == .ok && whole.data == audio)
            let long = try await client.call(.get, "/v1/renders/\(id)/audio", headers: [.range: "bytes=1000-2500000"])
            #expect(long.status == .partialContent && long.data == audio[1000...2_500_000])
        }
    }

    @Test("the synthesis cache is shared: messages synthesized on A are cache hits on B, with no provider request", arguments: Backend.allCases)
    func sharedSynthesisCache(backend: Backend) async throws {
        let folder = try TemporaryDirectory()
        // The open server: the test lists the bucket (moto's signature check refuses a `/` in a listing's prefix).
        let (setting, environment) = try await Self.storage(backend, shared: folder, server: .open)
        let stub = try StubSpeech.openAIServer(latency: 0)
        let instance = {
            try TestService(stub: stub) { configuration in
                configuration.storage = setting
                configuration.environment = environment
            }
        }
        let a = try instance()
        let b = try instance()
        let texts = ["The cache is shared.", "Between the instances.", "Through the storage."]
        let madeOnA = try await a.test { client in
            try await client.call(.post, "/v1/renders", json: textRequest(texts, voice: "openai:nova"))
        }
        #expect(madeOnA.status == .created)
        #expect(stub.requests.count == 3)
        // Another render (WAV, so another id) of the same messages on B: every message from the shared tier.
        let madeOnB = try await b.test { client in
            try await client.call(.post, "/v1/renders", json: textRequest(texts, voice: "openai:nova", format: "wav"))
        }
        #expect(madeOnB.status == .created, "\(madeOnB.text)")
        #expect(stub.requests.count == 3, "B asked the provider again")
        let manifestA = try madeOnA.decode(RenderManifest.self)
        let manifestB = try madeOnB.decode(RenderManifest.self)
        #expect(
            manifestA.id != manifestB.id && manifestA.duration != nil && manifestB.duration != nil
                && abs(manifestA.duration! - manifestB.duration!) < 0.05)
        // Nothing in the shared tier holds the provider key.
        let store = try SharedStorage.make(setting, redirectAudio: false, environment: environment)
        let names = try await store.blobs.list(prefix: "cache/")
        #expect(names.count == 6, "\(names)")
        for name in names where name.hasSuffix(".json") {
            let text = String(buffer: try #require(try await store.blobs.read(name)))
            #expect(!text.contains(providerKey))
        }
    }
}

import ChorusFixtures
import ChorusWire
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

@testable import ChorusService

@Suite("Service: keys, limits and the open routes")
struct ServiceSecurityTests {
    @Test("every /v1 route answers 401 without a key or with a wrong one; the open routes need none")
    func authentication() async throws {
        let service = try TestService()
        let server = try await service.server()
        let v1 = server.routes.routes.filter { $0.path.hasPrefix("/v1") }
        #expect(v1.count >= 14)
        try await server.application.test(.router) { client in
            for route in v1 {
                let uri = route.path.replacingOccurrences(of: "{id}", with: String(repeating: "a", count: 32))
                let method = HTTPRequest.Method(route.method.uppercased())!
                for key in [nil, "wrong-key-0123456789abcdef", serviceKey + "x"] as [String?] {
                    let response = try await client.call(method, uri, json: "{}", key: key)
                    #expect(response.status == .unauthorized, "\(route.method) \(uri) with \(key ?? "no key")")
                    if method != .head { #expect(response.errorCode == "unauthorized") }
                }
            }
            for open in ["/health", "/metrics", "/openapi.json"] {
                #expect(try await client.call(.get, open, key: nil).status == .ok, "\(open)")
            }
            let health = try await client.call(.get, "/health", key: nil).decode(HealthResponse.self)
            #expect(health.status == "ok" && !health.version.isEmpty)
            #expect(try await client.call(.get, "/v1/voices").status == .ok)
            #expect(try await client.call(.get, "/nowhere").errorCode == "not_found")
        }
    }

    @Test("the OpenAPI document describes exactly the routes the service has")
    func openAPIMatchesRoutes() async throws {
        let service = try TestService()
        let server = try await service.server()
        let document = try JSONSerialization.jsonObject(with: OpenAPIDocument.data()) as! [String: Any]
        #expect((document["openapi"] as? String)?.hasPrefix("3.1") == true)
        let paths = document["paths"] as! [String: [String: Any]]
        let documented = Set(paths.flatMap { path, operations in operations.keys.map { "\($0) \(path)" } })
        let routed = Set(server.routes.routes.map { "\($0.method) \($0.path)" })
        #expect(documented == routed, "documented only: \(documented.subtracting(routed)); routed only: \(routed.subtracting(documented))")
        for (path, operations) in paths where path.hasPrefix("/v1") {
            for (method, operation) in operations {
                let responses = (operation as! [String: Any])["responses"] as! [String: Any]
                #expect(responses["401"] != nil, "\(method) \(path) documents 401")
            }
        }
    }

    @Test("the rate limit answers 429 with Retry-After once a key has used its requests")
    func rateLimit() async throws {
        let service = try TestService { $0.rateLimitPerMinute = 1 }
        try await service.test { client in
            // A cheap route (an unknown render: 404 after the limiter), so the two requests come well within the
            // 60 s in which the bucket earns a request back, even on a machine the whole suite loads.
            let unknown = "/v1/renders/" + String(repeating: "0", count: RenderIdentity.length)
            #expect(try await client.call(.get, unknown).status == .notFound)
            let limited = try await client.call(.get, unknown)
            #expect(limited.status == .tooManyRequests && limited.errorCode == "rate_limited")
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(try await client.call(.get, "/health", key: nil).status == .ok, "open routes are not limited")
        }
    }

    @Test("no keys: allowed on loopback only, refused on other hosts; short keys are refused")
    func openMode() throws {
        var configuration = try ServiceConfiguration(environment: ["CHORUS_HOST": "0.0.0.0", "CHORUS_PORT": "9000"])
        #expect(configuration.port == 9000)
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.host = "127.0.0.1"
        try configuration.validate()
        configuration.apiKeys = ["short"]
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        let fromEnvironment = try ServiceConfiguration(environment: [
            "CHORUS_API_KEYS": "first-key-0123456789,second-key-0123456789",
            "CHORUS_RETENTION": "90m", "CHORUS_RATE_LIMIT": "0",
        ])
        #expect(fromEnvironment.apiKeys == ["first-key-0123456789", "second-key-0123456789"])
        #expect(fromEnvironment.retentionSeconds == 5_400 && fromEnvironment.rateLimitPerMinute == 0)
        #expect(throws: ConfigurationError.self) { _ = try ServiceConfiguration(environment: ["CHORUS_PORT": "eighty"]) }
        // The idle timeout: a duration, within 0.1 s … 1 h, named when it is not.
        var idle = try ServiceConfiguration(environment: ["CHORUS_IDLE_TIMEOUT": "2m"])
        #expect(idle.idleTimeoutSeconds == 120)
        idle.idleTimeoutSeconds = 0.01
        #expect { try idle.validate() } throws: { ($0 as? ConfigurationError)?.setting == "idleTimeoutSeconds" }
        #expect(throws: ConfigurationError.self) { _ = try ServiceConfiguration(environment: ["CHORUS_IDLE_TIMEOUT": "soon"]) }
    }

    @Test("every request is logged once with its id (also in X-Request-Id); keys never appear in logs or responses")
    func logging() async throws {
        let service = try TestService()
        try await service.test { client in
            let response = try await client.call(.get, "/v1/voices?key=\(serviceKey)")
            let id = try #require(response.headers[.init("X-Request-Id")!])
            let line = try #require(service.logs.lines.first { $0.contains(id) })
            #expect(line.contains("\"path\":\"/v1/voices?key=[redacted]\"") && line.contains("\"status\":\"200\""))
            _ = try await client.call(.get, "/v1/voices", key: "wrong-but-long-key-SECRET-123")
        }
        let leaks = service.logs.lines.filter { $0.contains(serviceKey) || $0.contains("SECRET") }
        #expect(leaks.isEmpty, "\(leaks)")
    }
}

@Suite("Service: secrets in descriptions")
struct SecretDescriptionTests {
    @Test("describing or dumping the configuration and the providers never shows a key")
    func noKeysInDescriptions() throws {
        let stub = try StubServer { _ in .json(404, [:]) }
        let service = try TestService(stub: stub)
        var dumped = ""
        dump(service.configuration, to: &dumped)
        let texts = [
            String(describing: service.configuration), String(reflecting: service.configuration), dumped,
            String(describing: service.configuration.registry!), String(reflecting: service.configuration.registry!),
        ]
        for text in texts {
            #expect(!text.contains(serviceKey) && !text.contains(providerKey) && !text.contains("SECRET"), "\(text.prefix(300))")
        }
    }
}

public import AsyncHTTPClient

/// The process's one outbound HTTP client, on AsyncHTTPClient's shared event loops: voice providers and
/// object storage share its connection pools. Connection establishment is not retried inside the client: a
/// refused or unreachable server fails the attempt at once and the caller's retry policy decides (backoff,
/// attempts, total time) — otherwise each attempt would wait out the connect timeout, and a server that is down
/// would hold a render for minutes before its error. A response that stops arriving for a minute (its head or any
/// part of its body) fails too: a request's own deadline covers only the wait for the head.
public enum OutboundHTTP {
    public static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(5)
        configuration.timeout.read = .seconds(60)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()
}

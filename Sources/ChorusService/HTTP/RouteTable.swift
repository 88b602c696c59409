import Hummingbird

/// Registers routes on the router and remembers each one (method and OpenAPI-style path), so a test
/// can hold the OpenAPI document to exactly the routes that exist.
final class RouteTable: @unchecked Sendable {
    typealias Handler = @Sendable (Request, ChorusRequestContext) async throws -> Response
    private(set) var routes: [(method: String, path: String)] = []

    /// Adds `path` (OpenAPI syntax: `/v1/renders/{id}`) for `method`.
    func add(_ method: HTTPRequest.Method, _ path: String, to router: some RouterMethods<ChorusRequestContext>, _ handler: @escaping Handler) {
        routes.append((method.rawValue.lowercased(), path))
        let routerPath = RouterPath(path.replacingOccurrences(of: "{", with: ":").replacingOccurrences(of: "}", with: ""))
        router.on(routerPath, method: method, use: handler)
    }

    /// The methods registered for a concrete `path` (`{name}` matches one non-empty segment), in
    /// registration order; empty when no route has that path.
    func methods(for path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var found: [String] = []
        for route in routes {
            let pattern = route.path.split(separator: "/", omittingEmptySubsequences: false)
            guard pattern.count == segments.count else { continue }
            let matches = zip(pattern, segments).allSatisfy { template, segment in
                template.hasPrefix("{") ? !segment.isEmpty : template == segment
            }
            if matches && !found.contains(route.method.uppercased()) { found.append(route.method.uppercased()) }
        }
        return found
    }
}

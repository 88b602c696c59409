import Foundation
import NIOSSL
import PostgresNIO

/// The PostgreSQL server `--database postgres://user:password@host:port/database?sslmode=…` names
/// (`CHORUS_DATABASE_URL`). `sslmode` as libpq reads it: `disable`; `allow`/`prefer` (TLS when the server offers it,
/// unverified); `require` (TLS, unverified, as libpq does without a root certificate); `verify-ca` (TLS, the server's
/// certificate checked against `sslrootcert` or the system's roots, not its name); `verify-full` (also its name).
/// The default is `prefer`, libpq's. The password never appears in a description, a log or an error.
struct DatabaseLocation: Sendable, CustomStringConvertible {
    let host: String
    let port: Int
    let user: String
    let password: String?
    let database: String
    let sslMode: String
    let rootCertificate: String?

    static let sslModes = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]

    /// - Throws: `ConfigurationError` naming `database`, with the URL's password masked.
    init(url text: String) throws {
        func refuse(_ reason: String) -> ConfigurationError {
            ConfigurationError(setting: .database, value: Self.masked(text), reason: reason)
        }
        guard let components = URLComponents(string: text), ["postgres", "postgresql"].contains(components.scheme ?? "") else {
            throw refuse("is not a postgres://user:password@host:port/database URL")
        }
        guard let host = components.host, !host.isEmpty else { throw refuse("names no host") }
        guard let user = components.user, !user.isEmpty else { throw refuse("names no user") }
        let database = String(components.path.dropFirst())
        guard !database.isEmpty, !database.contains("/") else { throw refuse("names no database (…/database)") }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else { throw refuse("has an impossible port") }
        var sslMode = "prefer"
        var rootCertificate: String?
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, Self.sslModes.contains(value) else {
                    throw refuse("sslmode must be one of \(Self.sslModes.joined(separator: ", "))")
                }
                sslMode = value
            case "sslrootcert":
                rootCertificate = item.value
            default:
                break  // application_name, connect_timeout and the like: not needed here
            }
        }
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.port = port
        self.user = user.removingPercentEncoding ?? user
        password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        self.sslMode = sslMode
        self.rootCertificate = rootCertificate
    }

    /// The URL with its password replaced by `…`, for errors and logs.
    static func masked(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.scheme != nil else { return "(not a postgres:// URL)" }
        if components.password != nil { components.password = "…" }
        if components.queryItems?.contains(where: { $0.name == "password" }) == true {
            components.queryItems = components.queryItems?.map { $0.name == "password" ? URLQueryItem(name: "password", value: "…") : $0 }
        }
        return components.string ?? "(not a postgres:// URL)"
    }

    var description: String { "postgres://\(user)@\(host):\(port)/\(database) (sslmode \(sslMode))" }

    /// The client configuration: TLS as `sslMode` says, a connect timeout of `connectTimeout` seconds.
    /// - Throws: `ConfigurationError` when `sslrootcert` cannot be read.
    func configuration(connectTimeout: Int, maximumConnections: Int) throws -> PostgresClient.Configuration {
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case "disable":
            tls = .disable
        case "allow", "prefer", "require":
            tlsConfiguration.certificateVerification = .none
            tls = sslMode == "require" ? .require(tlsConfiguration) : .prefer(tlsConfiguration)
        default:  // verify-ca, verify-full
            if let rootCertificate {
                do {
                    tlsConfiguration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificate))
                } catch {
                    throw ConfigurationError(
                        setting: .database, value: "sslrootcert=\(rootCertificate)", reason: "cannot be read as PEM certificates")
                }
            }
            tlsConfiguration.certificateVerification = sslMode == "verify-full" ? .fullVerification : .noHostnameVerification
            tls = .require(tlsConfiguration)
        }
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(connectTimeout)
        configuration.options.maximumConnections = maximumConnections
        return configuration
    }
}

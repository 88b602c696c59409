/// Every error the service returns: `{"error": {"code": "…", "message": "…", "field": "…"}}`.
///
/// ```json
/// {"error": {"code": "too_large", "message": "messages: 250 messages; the limit is 200", "field": "messages"}}
/// ```
public struct ErrorBody: Codable, Sendable, Equatable, Error {
    public struct Detail: Codable, Sendable, Equatable {
        /// A stable machine-readable code (`unauthorized`, `too_large`, `provider_error`, …).
        public var code: String
        /// A sentence for people.
        public var message: String
        /// The request field it is about (`messages[3].clip`), when there is one.
        public var field: String?

        public init(code: String, message: String, field: String? = nil) {
            self.code = code
            self.message = message
            self.field = field
        }
    }

    public var error: Detail

    public init(code: String, message: String, field: String? = nil) {
        error = Detail(code: code, message: message, field: field)
    }
}

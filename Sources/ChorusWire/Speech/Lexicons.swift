/// `PUT /v1/lexicons/{name}`: a pronunciation lexicon stored for the calling key, the same entries a render's inline
/// `lexicon` takes: each word's alias (`"Nguyen": "win"`) or `{"alias": …, "ipa": …, "case_sensitive": …}`.
public struct LexiconUpload: Codable, Sendable, Equatable {
    public var entries: [String: JSONValue]

    public init(entries: [String: JSONValue]) {
        self.entries = entries
    }
}

/// A stored lexicon (`GET /v1/lexicons/{name}`, and `PUT`'s answer); in a list, without its entries.
public struct LexiconInfo: Codable, Sendable, Equatable {
    /// Letters, digits, `-` and `_`, 1–64 characters (`LexiconInfo.isValidName`).
    public var name: String
    public var entryCount: Int
    /// The SHA-256 of the entries' canonical JSON (hex): changes when any entry does.
    public var digest: String
    /// When it was last stored, ISO 8601 (UTC).
    public var updatedAt: String
    /// The entries (not in `GET /v1/lexicons`).
    public var entries: [String: JSONValue]?

    public init(name: String, entryCount: Int, digest: String, updatedAt: String, entries: [String: JSONValue]? = nil) {
        self.name = name
        self.entryCount = entryCount
        self.digest = digest
        self.updatedAt = updatedAt
        self.entries = entries
    }

    /// Whether `name` may name a lexicon: 1–64 ASCII letters, digits, `-` or `_`.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
            }
    }

    enum CodingKeys: String, CodingKey {
        case name
        case entryCount = "entry_count"
        case digest
        case updatedAt = "updated_at"
        case entries
    }
}

/// `GET /v1/lexicons`: the calling key's lexicons, by name.
public struct LexiconList: Codable, Sendable, Equatable {
    public var lexicons: [LexiconInfo]

    public init(lexicons: [LexiconInfo]) {
        self.lexicons = lexicons
    }
}

import ChorusAudio
import ChorusConversation
import ChorusOutbound
import ChorusSupport
import ChorusText
import ChorusWire
import Crypto
import Foundation
import PostgresNIO
import SQLiteNIO

/// Pronunciation lexicons stored per API key (`/v1/lexicons`): in the embedded database, or in PostgreSQL when
/// instances share one (`--database`), so a lexicon stored through one instance is used by all. A render, `/v1/speech`
/// or `/v1/audio/speech` naming one (`"lexicon": "family"`) is given its entries as it is accepted (`inlined`): the
/// render id is computed from them and a queued render carries them, so changing a lexicon later never changes what a
/// render already accepted says, and re-rendering after a change re-synthesizes only the messages it touches.
struct LexiconStore: Sendable {
    enum Backing: Sendable {
        case local(LocalDatabase)
        case shared(PostgresDatabase)
    }

    let backing: Backing

    /// At most this many lexicons per key, each in at most `maximumBytes` of JSON (and at most `Lexicon.maximumEntries`
    /// entries, as any lexicon).
    static let maximumLexicons = 100
    static let maximumBytes = 262_144

    /// One stored lexicon.
    struct Stored: Sendable {
        var name: String
        /// The entries' canonical JSON (`Lexicon.json`).
        var body: String
        var entryCount: Int
        var digest: String
        var updatedAt: Double

        func info(withEntries: Bool) -> LexiconInfo {
            var entries: [String: JSONValue]?
            if withEntries, case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(body.utf8)) { entries = object }
            return LexiconInfo(name: name, entryCount: entryCount, digest: digest, updatedAt: DateText.iso(updatedAt), entries: entries)
        }
    }

    /// The checked name of a lexicon: 1–64 ASCII letters, digits, `-`, `_` (`LexiconInfo.isValidName`), else 400 naming `name`.
    static func checkedName(_ name: String) throws -> String {
        guard LexiconInfo.isValidName(name) else {
            throw ServiceError.badRequest("a lexicon's name is 1–64 letters, digits, - or _", field: "name")
        }
        return name
    }

    /// Stores `lexicon` as `name` for `caller`, replacing one of that name; returns it and whether it is new.
    /// - Throws: 409 `too_many_lexicons` when the key has `maximumLexicons` others; database errors.
    func put(_ lexicon: Lexicon, name: String, caller: String, now: Double = Date().timeIntervalSince1970) async throws -> (Stored, created: Bool) {
        let body = JSONValue.object(lexicon.json).canonicalText
        let stored = Stored(
            name: name, body: body, entryCount: lexicon.entries.count,
            digest: Hex.string(SHA256.hash(data: Data(body.utf8))), updatedAt: now)
        let limit = Self.maximumLexicons
        let created: Bool?
        switch backing {
        case .local(let database):
            // The write and its limit in one statement (whether it is new is read before: only 200 or 201 depends on it).
            let existed = try await database.rows(
                "SELECT 1 AS found FROM lexicons WHERE caller = ? AND name = ?", [.text(caller), .text(name)],
                operation: "store a lexicon")
            let rows = try await database.rows(
                """
                INSERT INTO lexicons (caller, name, body, entries, digest, updated_at)
                SELECT ?, ?, ?, ?, ?, ?
                WHERE EXISTS (SELECT 1 FROM lexicons WHERE caller = ? AND name = ?)
                   OR (SELECT count(*) FROM lexicons WHERE caller = ?) < ?
                ON CONFLICT (caller, name) DO UPDATE SET body = excluded.body, entries = excluded.entries, digest = excluded.digest,
                    updated_at = excluded.updated_at
                RETURNING name
                """,
                [
                    .text(caller), .text(name), .text(body), .integer(stored.entryCount), .text(stored.digest), .float(now),
                    .text(caller), .text(name), .text(caller), .integer(limit),
                ],
                operation: "store a lexicon")
            created = rows.isEmpty ? nil : existed.isEmpty
        case .shared(let database):
            created = try await database.run("store a lexicon") { client in
                // The key's lexicons locked first, so two writes of one key at once cannot both pass the count.
                try await client.withTransaction(logger: database.logger) { connection in
                    try await connection.query("SELECT pg_advisory_xact_lock(hashtext('chorus-lexicons:' || \(caller)))", logger: database.logger)
                    var existing = 0
                    var exists = false
                    for try await (count, named) in try await connection.query(
                        """
                        SELECT count(*)::int, count(*) FILTER (WHERE name = \(name))::int FROM chorus_lexicons WHERE caller = \(caller)
                        """, logger: database.logger
                    ).decode((Int, Int).self) {
                        existing = count
                        exists = named > 0
                    }
                    guard exists || existing < limit else { return nil }
                    try await connection.query(
                        """
                        INSERT INTO chorus_lexicons (caller, name, body, entries, digest, updated_at)
                        VALUES (\(caller), \(name), \(body), \(stored.entryCount), \(stored.digest), \(now))
                        ON CONFLICT (caller, name) DO UPDATE SET body = excluded.body, entries = excluded.entries,
                            digest = excluded.digest, updated_at = excluded.updated_at
                        """, logger: database.logger)
                    return !exists
                }
            }
        }
        guard let created else {
            throw ServiceError(
                .conflict, .tooManyLexicons, "this key already has \(limit) lexicons: delete one (DELETE /v1/lexicons/{name}) first",
                field: "name")
        }
        return (stored, created)
    }

    /// `caller`'s lexicon `name`, if any.
    func get(_ name: String, caller: String) async throws -> Stored? {
        switch backing {
        case .local(let database):
            let rows = try await database.rows(
                "SELECT name, body, entries, digest, updated_at FROM lexicons WHERE caller = ? AND name = ?",
                [.text(caller), .text(name)], operation: "read a lexicon")
            return rows.first.flatMap(Self.stored)
        case .shared(let database):
            return try await database.run("read a lexicon") { client in
                var found: Stored?
                for try await row in try await client.query(
                    """
                    SELECT name, body, entries, digest, updated_at FROM chorus_lexicons WHERE caller = \(caller) AND name = \(name)
                    """, logger: database.logger
                ).decode((String, String, Int, String, Double).self) {
                    found = Stored(name: row.0, body: row.1, entryCount: row.2, digest: row.3, updatedAt: row.4)
                }
                return found
            }
        }
    }

    /// `caller`'s lexicons by name (their bodies left out).
    func list(caller: String) async throws -> [Stored] {
        switch backing {
        case .local(let database):
            let rows = try await database.rows(
                "SELECT name, '' AS body, entries, digest, updated_at FROM lexicons WHERE caller = ? ORDER BY name",
                [.text(caller)], operation: "list lexicons")
            return rows.compactMap(Self.stored)
        case .shared(let database):
            return try await database.run("list lexicons") { client in
                var found: [Stored] = []
                for try await row in try await client.query(
                    """
                    SELECT name, entries, digest, updated_at FROM chorus_lexicons WHERE caller = \(caller) ORDER BY name COLLATE "C"
                    """, logger: database.logger
                ).decode((String, Int, String, Double).self) {
                    found.append(Stored(name: row.0, body: "", entryCount: row.1, digest: row.2, updatedAt: row.3))
                }
                return found
            }
        }
    }

    /// Deletes `caller`'s lexicon `name`; whether there was one.
    func delete(_ name: String, caller: String) async throws -> Bool {
        switch backing {
        case .local(let database):
            let rows = try await database.rows(
                "DELETE FROM lexicons WHERE caller = ? AND name = ? RETURNING name", [.text(caller), .text(name)],
                operation: "delete a lexicon")
            return !rows.isEmpty
        case .shared(let database):
            return try await database.run("delete a lexicon") { client in
                let rows = try await client.query(
                    "DELETE FROM chorus_lexicons WHERE caller = \(caller) AND name = \(name) RETURNING name",
                    logger: database.logger
                ).collect()
                return !rows.isEmpty
            }
        }
    }

    /// A request's `lexicon` as entries: a stored lexicon's name (for `caller`) becomes its entries; entries stay.
    /// - Throws: 422 `unknown_lexicon` for a name the key has not stored; 400 for anything but a name or an object.
    func inlined(_ value: JSONValue?, caller: String, field: String = "lexicon") async throws -> JSONValue? {
        switch value {
        case nil, .null?: return nil
        case .object?: return value
        case .string(let name)?:
            guard LexiconInfo.isValidName(name), let stored = try await get(name, caller: caller),
                case .object(let entries) = try JSONDecoder().decode(JSONValue.self, from: Data(stored.body.utf8))
            else {
                throw ServiceError.invalid(
                    "no lexicon \"\(name.prefix(64))\" is stored for this key (PUT /v1/lexicons/{name})", field: field,
                    code: .unknownLexicon)
            }
            return .object(entries)
        default:
            throw ServiceError.badRequest("\(field): a stored lexicon's name, or an object of entries", field: field)
        }
    }

    private static func stored(_ row: SQLiteRow) -> Stored? {
        guard let name = row.column("name")?.string, let body = row.column("body")?.string, let entries = row.column("entries")?.integer,
            let digest = row.column("digest")?.string, let updated = row.column("updated_at")?.double
        else { return nil }
        return Stored(name: name, body: body, entryCount: entries, digest: digest, updatedAt: updated)
    }
}

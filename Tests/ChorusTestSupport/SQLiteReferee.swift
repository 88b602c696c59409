public import Foundation

/// Reads an SQLite database the way an outsider would: Python's sqlite3 (not Chorus's driver), in autocommit mode so it
/// sees what another process committed. Values of every row, `|`-separated, in one line.
public enum SQLiteReferee {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// - Throws: `Failure` with Python's error when the query fails (a locked or missing database, bad SQL).
    public static func query(_ file: URL, _ sql: String, _ arguments: [String] = []) async throws -> String {
        let run = try await ToolRun.run(
            [
                "python3", "-c",
                """
                import sqlite3, sys
                rows = sqlite3.connect(sys.argv[1], isolation_level=None).execute(sys.argv[2], sys.argv[3:])
                print('|'.join(str(v) for row in rows for v in row))
                """, file.path, sql,
            ] + arguments)
        guard run.status == 0 else {
            throw Failure(description: "sqlite3 failed on \(file.lastPathComponent): \(run.errors.suffix(400))")
        }
        return run.output
    }
}

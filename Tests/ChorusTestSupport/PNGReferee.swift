public import Foundation

/// Reads a PNG with Python's standard library (`png_columns.py`), independently of libgd: its size and,
/// per pixel column, the colours drawn (other than the background) between two rows and their extent.
public enum PNGReferee {
    public struct Columns: Decodable {
        public var width: Int
        public var height: Int
        public var columns: [[String]]
        public var extents: [[Int]?]
        public var background: String
    }

    public static func columns(of png: URL, rows: ClosedRange<Int>) throws -> Columns {
        let run = try ToolRun([
            "python3", Repository.supportScript("png_columns.py").path, png.path, String(rows.lowerBound), String(rows.upperBound),
        ])
        return try JSONDecoder().decode(Columns.self, from: run.data)
    }
}

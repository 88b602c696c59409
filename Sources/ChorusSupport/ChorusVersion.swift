/// The version of Chorus: what `chorus --version` prints, `GET /health` reports and outbound requests send as their
/// `User-Agent` (`chorus/<version>`). The one place it is written.
public enum ChorusVersion {
    public static let current = "0.2.0"

    /// `chorus/<version>`.
    public static var userAgent: String { "chorus/\(current)" }
}

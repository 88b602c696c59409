import Foundation

/// Dates as text without a formatter object (ICU formatters cost microseconds each, and the service
/// prints dates on every request): ISO 8601 in UTC for manifests and logs, RFC 9110's IMF-fixdate for HTTP.
public enum DateText {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func parts(_ seconds: Double) -> tm {
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        return parts
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// `2026-11-22T02:24:45Z`.
    public static func iso(_ seconds: Double) -> String {
        let t = parts(seconds)
        return "\(t.tm_year + 1900)-\(two(t.tm_mon + 1))-\(two(t.tm_mday))T\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec))Z"
    }

    /// `Sun, 22 Nov 2026 02:24:45 GMT`.
    public static func http(_ seconds: Double) -> String {
        let t = parts(seconds)
        return
            "\(days[Int(t.tm_wday)]), \(two(t.tm_mday)) \(months[Int(t.tm_mon)]) \(t.tm_year + 1900) \(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
    }

    /// `20261122T022445Z` and `20261122`: SigV4's request time and credential day.
    public static func amz(_ seconds: Double) -> (time: String, day: String) {
        let t = parts(seconds)
        let day = "\(t.tm_year + 1900)\(two(t.tm_mon + 1))\(two(t.tm_mday))"
        return ("\(day)T\(two(t.tm_hour))\(two(t.tm_min))\(two(t.tm_sec))Z", day)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The `Date` field of the endpoints' answers (RFC 9110, section 6.6.1: an origin server with a
/// clock sends one), in the IMF-fixdate form, formatted at most once a second.
final class ResponseDate: Sendable {
    static let shared = ResponseDate()

    private let cached = Mutex<(second: time_t, text: String)>((-1, ""))

    /// Now, to the second.
    var now: String {
        let second = time(nil)
        return cached.withLock { cached in
            if cached.second != second { cached = (second, Self.format(second)) }
            return cached.text
        }
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(_ second: time_t) -> String {
        var seconds = second
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = days[Int(parts.tm_wday)]
        let month = months[Int(parts.tm_mon)]
        return "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}

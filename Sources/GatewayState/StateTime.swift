import Foundation

/// Times in state files as the admin API writes them: RFC 3339 in UTC with seconds
/// (`2027-01-31T00:00:00Z`), so an export is the API's value and reads back to the same one.
enum StateTime {
    static func text(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// Whole seconds, `Z` or an offset, with or without fractional seconds.
    static func date(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = try? Date(trimmed, strategy: .iso8601) { return date }
        return try? Date(trimmed, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

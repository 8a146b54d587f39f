import Foundation

/// `--from` and `--to`: RFC 3339 times (`2026-11-22T03:30:00Z`), checked before any request.
struct AuditTime {
    let date: Date

    static func parse(_ text: String) throws -> AuditTime {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = plain.date(from: text) ?? fractional.date(from: text) else {
            throw DurationOptionError(description: "'\(text)' is not an RFC 3339 time such as 2026-11-22T03:30:00Z")
        }
        return AuditTime(date: date)
    }
}

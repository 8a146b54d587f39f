import Foundation

/// The calendar days and months of quotas and usage, in the gateway's `usage.time_zone`: a
/// partner in India is billed by Asia/Kolkata days, whatever zone the gateway's hosts run in.
public struct QuotaCalendar: Sendable {
    /// One day or month: its name (`2026-11-26`, `2026-11`) and the instants it spans.
    public struct Window: Sendable, Hashable {
        public let label: String
        public let start: Date
        /// The start of the next period.
        public let end: Date
    }

    public let timeZone: TimeZone
    private let calendar: Calendar

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    public static let utc = QuotaCalendar(timeZone: TimeZone(identifier: "UTC")!)

    /// The day or month holding `date`.
    public func window(_ period: Quota.Period, containing date: Date) -> Window {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        let year = parts.year ?? 1970, month = parts.month ?? 1, day = parts.day ?? 1
        switch period {
        case .day:
            let start = calendar.date(from: DateComponents(year: year, month: month, day: day)) ?? date
            let end = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
            return Window(label: Self.label(year, month, day), start: start, end: end)
        case .month:
            let start = calendar.date(from: DateComponents(year: year, month: month, day: 1)) ?? date
            let end = calendar.date(byAdding: .month, value: 1, to: start) ?? start.addingTimeInterval(31 * 86_400)
            return Window(label: Self.label(year, month, nil), start: start, end: end)
        }
    }

    /// The day holding `date`, as usage reports name it (`2026-11-26`).
    public func day(containing date: Date) -> String {
        window(.day, containing: date).label
    }

    /// The days from `first` to `last` (both `YYYY-MM-DD`, inclusive), or nil when either is
    /// not a date or `last` comes first.
    public func days(from first: String, to last: String) -> [String]? {
        guard let start = self.start(of: first), let end = self.start(of: last), start <= end else { return nil }
        var days: [String] = []
        var current = start
        while current <= end {
            days.append(day(containing: current))
            guard let next = calendar.date(byAdding: .day, value: 1, to: current) else { break }
            current = next
        }
        return days
    }

    /// The start of the day `text` names (`YYYY-MM-DD`, a real date), or nil.
    public func start(of text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day),
              let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              self.day(containing: date) == text
        else { return nil }
        return date
    }

    private static func label(_ year: Int, _ month: Int, _ day: Int?) -> String {
        let head = String(format: "%04d-%02d", year, month)
        return day.map { head + String(format: "-%02d", $0) } ?? head
    }
}

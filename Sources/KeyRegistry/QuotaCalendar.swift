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

    /// The most days ``days(from:to:)`` lists: a leap year's.
    public static let maximumRangeDays = 366

    /// How many days `first` to `last` span (both `YYYY-MM-DD`, inclusive; 0 or less when
    /// `last` comes first), or nil when either is not a date. Counted from the dates' numbers,
    /// not by walking the days: a client's range costs nothing however long it is.
    public func dayCount(from first: String, to last: String) -> Int? {
        guard let from = parts(of: first), let to = parts(of: last) else { return nil }
        return Self.dayNumber(to) - Self.dayNumber(from) + 1
    }

    /// The days from `first` to `last` (both `YYYY-MM-DD`, inclusive), or nil when either is
    /// not a date, `last` comes first, or they span more than ``maximumRangeDays``: the range
    /// is measured before any day is listed.
    public func days(from first: String, to last: String) -> [String]? {
        guard let count = dayCount(from: first, to: last), (1...Self.maximumRangeDays).contains(count),
              let start = self.start(of: first), let end = self.start(of: last)
        else { return nil }
        var days: [String] = []
        var current = start
        while current <= end, days.count < count {
            days.append(day(containing: current))
            guard let next = calendar.date(byAdding: .day, value: 1, to: current) else { break }
            current = next
        }
        return days
    }

    /// The start of the day `text` names (`YYYY-MM-DD`, a real date), or nil.
    public func start(of text: String) -> Date? {
        guard let parts = self.parts(of: text),
              let date = calendar.date(from: DateComponents(year: parts.year, month: parts.month, day: parts.day)),
              self.day(containing: date) == text
        else { return nil }
        return date
    }

    /// Year, month and day of `text` when it has the form `YYYY-MM-DD` (not yet checked to be a
    /// real date).
    private func parts(of text: String) -> (year: Int, month: Int, day: Int)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        return (year: year, month: month, day: day)
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's `days_from_civil`).
    private static func dayNumber(_ date: (year: Int, month: Int, day: Int)) -> Int {
        let year = date.month <= 2 ? date.year - 1 : date.year
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * ((date.month + 9) % 12) + 2) / 5 + date.day - 1
        return era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
    }

    private static func label(_ year: Int, _ month: Int, _ day: Int?) -> String {
        let head = String(format: "%04d-%02d", year, month)
        return day.map { head + String(format: "-%02d", $0) } ?? head
    }
}

import Foundation

/// A time range of the audit trail, `from` included and `to` excluded, by when Redis wrote
/// each entry (its stream id's milliseconds).
public struct AuditWindow: Sendable, Equatable {
    public var from: Date?
    public var to: Date?

    public init(from: Date? = nil, to: Date? = nil) {
        self.from = from
        self.to = to
    }

    var startID: String {
        from.map { String(max(0, Self.milliseconds($0))) } ?? "-"
    }

    /// The last millisecond before `to` (an incomplete id as an end covers that whole millisecond).
    var endID: String {
        to.map { String(Self.milliseconds($0) - 1) } ?? "+"
    }

    /// Nothing can be in it (Redis would refuse the range).
    var isEmpty: Bool {
        guard let to else { return false }
        return Self.milliseconds(to) <= max(0, from.map(Self.milliseconds) ?? 0)
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}

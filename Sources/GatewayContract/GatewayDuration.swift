import Foundation

/// A duration as operators write it, in the configuration file, the admin API and
/// `gatewayctl` alike: one or more whole numbers each followed by a unit, largest unit first
/// (`500ms`, `30s`, `10m`, `1h30m`, `1d12h`, `90d`), or a bare `0`.
///
/// Units: `d` (24 hours), `h`, `m` (minutes), `s`, `ms`. Each unit appears at most once, so
/// `1h30m` is unambiguous and `30m1h` (almost always a typo) is refused. No signs, fractions
/// or spaces inside: a duration that reads oddly is an error, never a guess.
public struct GatewayDuration: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public enum Unit: String, Sendable, CaseIterable {
        case days = "d", hours = "h", minutes = "m", seconds = "s", milliseconds = "ms"

        var milliseconds: Int64 {
            switch self {
            case .days: 86_400_000
            case .hours: 3_600_000
            case .minutes: 60_000
            case .seconds: 1_000
            case .milliseconds: 1
            }
        }
    }

    /// The whole duration in milliseconds, the grammar's smallest unit.
    public let milliseconds: Int64

    /// How the grammar is described to people in error messages.
    public static let grammar = "a whole number and a unit (d, h, m, s, ms), largest first, such as 500ms, 30s, 1h30m or 90d"

    /// The longest duration written: 100 years, far beyond any timeout or key lifetime, and
    /// small enough that no sum of components overflows.
    public static let longest = GatewayDuration(milliseconds: 36_500 * Unit.days.milliseconds)

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// Parses `text` (surrounding spaces ignored); the error says what is wrong with it.
    public init(parsing text: String) throws(InvalidDuration) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "0" {
            self.init(milliseconds: 0)
            return
        }
        guard !trimmed.isEmpty else { throw InvalidDuration(text: text, reason: "it is empty") }
        var rest = Substring(trimmed)
        var total: Int64 = 0
        var previous: Unit?
        while !rest.isEmpty {
            let digits = rest.prefix(while: { $0.isASCII && $0.isNumber })
            guard !digits.isEmpty else {
                throw InvalidDuration(text: text, reason: "expected a whole number at \"\(rest)\"")
            }
            guard digits.count <= 12, let amount = Int64(digits) else {
                throw InvalidDuration(text: text, reason: "\(digits) is too large")
            }
            rest = rest.dropFirst(digits.count)
            let letters = rest.prefix(while: { $0.isASCII && $0.isLetter })
            guard !letters.isEmpty else {
                throw InvalidDuration(text: text, reason: rest.isEmpty ? "\(digits) has no unit" : "unexpected \"\(rest.prefix(1))\" after \(digits)")
            }
            guard let unit = Unit(rawValue: String(letters)) else {
                throw InvalidDuration(text: text, reason: "\"\(letters)\" is not a unit")
            }
            if let previous, unit.milliseconds >= previous.milliseconds {
                throw InvalidDuration(text: text, reason: "units go from largest to smallest, each once (\"\(previous.rawValue)\" before \"\(unit.rawValue)\")")
            }
            previous = unit
            rest = rest.dropFirst(letters.count)
            // Checked before multiplying: 12 digits of days would overflow Int64.
            guard amount <= (Self.longest.milliseconds - total) / unit.milliseconds else {
                throw InvalidDuration(text: text, reason: "it is longer than 36500d")
            }
            total += amount * unit.milliseconds
        }
        self.init(milliseconds: total)
    }

    /// The value as a Swift `Duration`.
    public var duration: Duration { .milliseconds(milliseconds) }

    /// In seconds, for `Date` arithmetic.
    public var timeInterval: Double { Double(milliseconds) / 1_000 }

    public var isZero: Bool { milliseconds == 0 }

    /// The canonical text: each unit once, largest first (`90m` reads back as `1h30m`, zero
    /// as `0s`), which parses to the same value.
    public var description: String {
        guard milliseconds > 0 else { return "0s" }
        var rest = milliseconds
        var text = ""
        for unit in Unit.allCases where rest >= unit.milliseconds {
            text += "\(rest / unit.milliseconds)\(unit.rawValue)"
            rest %= unit.milliseconds
        }
        return text
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    public static func < (lhs: GatewayDuration, rhs: GatewayDuration) -> Bool { lhs.milliseconds < rhs.milliseconds }
}

/// Why a text is not a duration, in words a person can act on.
public struct InvalidDuration: Error, Sendable, Hashable, CustomStringConvertible {
    public let text: String
    public let reason: String

    public var description: String {
        "\"\(text)\" is not a duration: \(reason) (write \(GatewayDuration.grammar))"
    }
}

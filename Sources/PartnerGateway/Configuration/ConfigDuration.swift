import Foundation

/// A duration written the way operators write them: `500ms`, `30s`, `10m`, `24h`, `90d`.
///
/// Used for every duration in the YAML file and in `gatewayctl` options, so there is one
/// grammar: a whole number followed by exactly one unit, nothing else.
struct ConfigDuration: Sendable, Hashable, Comparable, Decodable, CustomStringConvertible {
    let duration: Duration
    let text: String

    static let grammar = "write 500ms, 30s, 10m, 24h or 90d"

    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix(while: \.isNumber)
        let unit = trimmed.dropFirst(digits.count)
        guard !digits.isEmpty, digits.count <= 12, let amount = Int64(digits) else { return nil }
        switch unit {
        case "ms": duration = .milliseconds(amount)
        case "s": duration = .seconds(amount)
        case "m": duration = .seconds(amount * 60)
        case "h": duration = .seconds(amount * 3_600)
        case "d": duration = .seconds(amount * 86_400)
        default: return nil
        }
        self.text = trimmed
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = (try? container.decode(String.self)) ?? ""
        guard let parsed = ConfigDuration(raw) else {
            throw ConfigError(path: decoder.codingPath, "\"\(raw)\" is not a duration (\(Self.grammar))")
        }
        self = parsed
    }

    var description: String { text }

    static func < (lhs: ConfigDuration, rhs: ConfigDuration) -> Bool { lhs.duration < rhs.duration }
}

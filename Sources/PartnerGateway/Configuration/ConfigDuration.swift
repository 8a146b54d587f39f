import Foundation
import GatewayContract

/// A duration in the configuration file: ``GatewayDuration``'s grammar (`500ms`, `30s`,
/// `1h30m`, `90d`), the one the admin API and `gatewayctl` use too, keeping the text as
/// written for messages.
struct ConfigDuration: Sendable, Hashable, Comparable, Decodable, CustomStringConvertible {
    let value: GatewayDuration
    let text: String

    var duration: Duration { value.duration }

    init?(_ text: String) {
        guard let value = try? GatewayDuration(parsing: text) else { return nil }
        self.value = value
        self.text = text.trimmingCharacters(in: .whitespaces)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = (try? container.decode(String.self)) ?? ""
        do {
            value = try GatewayDuration(parsing: raw)
        } catch {
            throw ConfigError(path: decoder.codingPath, error.description)
        }
        text = raw.trimmingCharacters(in: .whitespaces)
    }

    var description: String { text }

    static func < (lhs: ConfigDuration, rhs: ConfigDuration) -> Bool { lhs.value < rhs.value }
}

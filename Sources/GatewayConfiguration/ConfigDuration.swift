import Foundation
import GatewayContract

/// A duration in the configuration file: ``GatewayDuration``'s grammar (`500ms`, `30s`,
/// `1h30m`, `90d`), the one the admin API and `gatewayctl` use too, keeping the text as
/// written for messages.
package struct ConfigDuration: Sendable, Hashable, Comparable, Decodable, CustomStringConvertible {
    package let value: GatewayDuration
    package let text: String

    package var duration: Duration { value.duration }

    package init?(_ text: String) {
        guard let value = try? GatewayDuration(parsing: text) else { return nil }
        self.value = value
        self.text = text.trimmingCharacters(in: .whitespaces)
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = (try? container.decode(String.self)) ?? ""
        do {
            value = try GatewayDuration(parsing: raw)
        } catch {
            throw ConfigError(path: decoder.codingPath, error.description)
        }
        text = raw.trimmingCharacters(in: .whitespaces)
    }

    package var description: String { text }

    package static func < (lhs: ConfigDuration, rhs: ConfigDuration) -> Bool { lhs.value < rhs.value }
}

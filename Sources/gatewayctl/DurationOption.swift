import GatewayContract

/// `--expires-in` and `--grace` take the gateway's one duration grammar (`90d`, `1h30m`),
/// checked before any request so a typo such as `--grace ten` is a usage error that says what
/// is wrong, instead of reaching the gateway.
enum DurationOption {
    static func parse(_ text: String) throws -> GatewayDuration {
        do {
            return try GatewayDuration(parsing: text)
        } catch {
            throw DurationOptionError(description: error.description)
        }
    }
}

struct DurationOptionError: Error, CustomStringConvertible {
    let description: String
}

/// A mistake in how the module was configured or called (bad key, empty issuer, ...).
///
/// Kept apart from ``AccessTokenError`` because these are the server's bugs, found at
/// start-up or when issuing, never a client's token being refused: the server should fail
/// loudly (500 / refuse to start) rather than answer 401.
public struct DriverTokensError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, without any secret material.
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    public var description: String { "DriverTokensError: \(message)" }
}

/// A misuse of this module's API (bad settings), with a message safe to log.
public struct DriverSessionsError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

import Foundation

/// A failure gatewayctl reports: one line for people (`description`, starting `error: `) and
/// an exit code for scripts. The codes are part of the CLI's contract (see the root command's
/// help), so every failure path goes through one of the factories below.
struct CtlError: Error, CustomStringConvertible, Equatable {
    /// 1: the gateway answered, and refused.
    static let refusedExitCode: Int32 = 1
    /// 2: no response at all.
    static let unreachableExitCode: Int32 = 2
    /// 3: no token, or the gateway does not accept it.
    static let unauthorizedExitCode: Int32 = 3
    /// 4: a confirmation was declined; nothing was changed.
    static let cancelledExitCode: Int32 = 4
    /// 64 (`EX_USAGE`): the command line or the profile file is wrong.
    static let usageExitCode: Int32 = 64

    let exitCode: Int32
    /// The text after `error: `, already one line.
    let message: String

    init(exitCode: Int32, message: String) {
        self.exitCode = exitCode
        self.message = Self.oneLine(message)
    }

    var description: String { "error: \(message)" }

    /// The gateway refused the request with the API's error shape.
    static func refused(code: String, message: String) -> CtlError {
        CtlError(exitCode: refusedExitCode, message: "\(message) (\(code))")
    }

    static func unreachable(_ url: String, reason: String) -> CtlError {
        CtlError(exitCode: unreachableExitCode, message: "cannot reach the gateway at \(url): \(reason)")
    }

    static func unauthorized(message: String) -> CtlError {
        CtlError(
            exitCode: unauthorizedExitCode,
            message: "\(message) (UNAUTHORIZED): check the admin token (--admin-token-file, GATEWAY_ADMIN_TOKEN_FILE, GATEWAY_ADMIN_TOKEN or the profile's token_file)"
        )
    }

    static let missingToken = CtlError(
        exitCode: unauthorizedExitCode,
        message: "no admin token: pass --admin-token-file, set GATEWAY_ADMIN_TOKEN_FILE or GATEWAY_ADMIN_TOKEN, or use a profile with a token_file"
    )

    static func usage(_ message: String) -> CtlError {
        CtlError(exitCode: usageExitCode, message: message)
    }

    static let cancelled = CtlError(exitCode: cancelledExitCode, message: "cancelled: nothing was changed")

    /// Folds whitespace runs (newlines included) into single spaces: a message from the
    /// server or from a library must not break the one-line promise.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}

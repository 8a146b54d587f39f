import Foundation

/// Reads the admin token from a file (`--admin-token-file`, `GATEWAY_ADMIN_TOKEN_FILE`, a
/// profile's `token_file`), as `gh auth login --with-token` and Docker secrets do, so the
/// token need not appear on a command line, where `ps` shows it to every local user.
enum AdminToken {
    /// The file's content without surrounding whitespace (the trailing newline editors add).
    /// Failures exit 3, like a missing token, and name the file and where it was named.
    static func read(path: String, source: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CtlError(exitCode: CtlError.unauthorizedExitCode, message: "cannot read the admin token file \(path) (from \(source))")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else {
            throw CtlError(exitCode: CtlError.unauthorizedExitCode, message: "the admin token file \(path) (from \(source)) is empty")
        }
        guard !token.contains(where: \.isNewline) else {
            throw CtlError(exitCode: CtlError.unauthorizedExitCode, message: "the admin token file \(path) (from \(source)) holds more than one line")
        }
        return token
    }
}

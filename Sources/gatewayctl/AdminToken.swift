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
        if let warning = permissionWarning(path: path) { StandardError.writeLine(warning) }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else {
            throw CtlError(exitCode: CtlError.unauthorizedExitCode, message: "the admin token file \(path) (from \(source)) is empty")
        }
        guard !token.contains(where: \.isNewline) else {
            throw CtlError(exitCode: CtlError.unauthorizedExitCode, message: "the admin token file \(path) (from \(source)) holds more than one line")
        }
        return token
    }

    /// A warning when the group or others may read or write the file, as ssh warns of a key
    /// file others can read; nil when only its owner may. A warning, not a refusal: secrets
    /// mounted by orchestrators are often 0644 inside a private container.
    static func permissionWarning(path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 != 0 else { return nil }
        return "warning: the admin token file \(path) is accessible by others (mode \(String(mode, radix: 8))); run chmod 600 \(path)"
    }
}

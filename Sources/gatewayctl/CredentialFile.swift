import Foundation
import GatewayContract

/// Where a new admin token goes: a new file readable by its owner only (`--token-file`), so
/// it never crosses the screen or the scrollback, or else printed once under the table.
enum CredentialFile {
    /// Refuses a path that exists before anything is created: a credential is never issued
    /// only to find it cannot be kept.
    static func refuseExisting(_ path: String?) throws {
        guard let path, FileManager.default.fileExists(atPath: path) else { return }
        throw CtlError.usage("\(path) exists already; give a new path to --token-file")
    }

    static func show(_ created: CreatedAdmin, tokenFile: String?, printer: Printer) throws {
        guard let tokenFile else {
            try printer.show(created, notes: ["", "token: \(created.token)", "store it now: it is not shown again."])
            return
        }
        guard create(tokenFile, holding: created.token) else {
            throw CtlError(exitCode: CtlError.refusedExitCode, message: "cannot write \(tokenFile): \(String(cString: strerror(errno))); the token of \(created.adminID) is lost, rotate it")
        }
        // The document still has every field but the token, which is in the file.
        try printer.show(
            CreatedAdmin(adminID: created.adminID, name: created.name, role: created.role, token: "(in \(tokenFile))", expiresAt: created.expiresAt),
            notes: ["", "token written to \(tokenFile) (mode 600)"]
        )
    }

    /// Writes `secret` and a newline to a new file at `path`, readable and writable by its
    /// owner only (mode 600, never an existing file); false when that failed (`errno` says why).
    static func create(_ path: String, holding secret: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { return false }
        let data = Array((secret + "\n").utf8)
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let closed = close(descriptor)
        return written == data.count && closed == 0
    }
}

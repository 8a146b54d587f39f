import Foundation
import GatewayState

/// `--secrets-out`: where the secrets of the keys and admin credentials an apply creates go,
/// each once: a file per secret in a directory (mode 600, never one that exists, the
/// directory made 700 when missing), or `-` for stdout, one `ID SECRET` line each. Never the
/// state file, a log or the report.
struct SecretsOut: Sendable {
    /// nil: stdout.
    let directory: String?

    init(_ argument: String) {
        directory = argument == "-" ? nil : argument
    }

    var printsToStandardOutput: Bool { directory == nil }

    /// Checks before any change that every secret can be kept: the directory exists or can be
    /// made, and no file of a secret whose id is known already exists.
    func prepare(for ids: [String]) throws {
        guard let directory else { return }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw CtlError.usage("--secrets-out \(directory) is not a directory") }
        } else {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw CtlError.usage("--secrets-out \(directory): cannot create it (\(error.localizedDescription))")
            }
        }
        guard access(directory, W_OK | X_OK) == 0 else { throw CtlError.usage("--secrets-out \(directory) is not writable") }
        if let taken = ids.first(where: { FileManager.default.fileExists(atPath: path(of: $0)) }) {
            throw CtlError.usage("\(path(of: taken)) exists already: secrets are never written over")
        }
    }

    func path(of id: String) -> String {
        ((directory ?? "") as NSString).appendingPathComponent(id)
    }

    /// Keeps one secret; says where it went.
    func keep(_ secret: StateApplier<AdminClient>.CreatedSecret) throws -> String {
        guard let directory else {
            print("\(secret.id) \(secret.secret)")
            return "stdout"
        }
        let path = path(of: secret.id)
        guard CredentialFile.create(path, holding: secret.secret) else {
            throw CtlError(
                exitCode: CtlError.refusedExitCode,
                message: "cannot write \(path) in \(directory): \(String(cString: strerror(errno))); the secret of \(secret.id) is lost, rotate it"
            )
        }
        return path
    }
}

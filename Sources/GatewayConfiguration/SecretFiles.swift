import Foundation

/// Secrets from files: a secret variable that is not set is read from the file its `_FILE`
/// variable names (`GATEWAY_JWT_SECRET_FILE=/run/secrets/jwt`), as container platforms hand
/// secrets over (Docker and Kubernetes secrets mounted as files, systemd's credentials). One
/// line break at the file's end is not part of the secret.
enum SecretFiles {
    /// `environment` with each of `names` that is not set read from its `_FILE`; a file that
    /// cannot be read is a problem naming the `_FILE` variable.
    static func expand(_ environment: [String: String], names: [String]) -> (environment: [String: String], problems: [ConfigError]) {
        var expanded = environment
        var problems: [ConfigError] = []
        for name in Set(names) where !name.isEmpty && (environment[name] ?? "").isEmpty {
            let fileVariable = name + "_FILE"
            guard let path = environment[fileVariable], !path.isEmpty else { continue }
            guard let data = FileManager.default.contents(atPath: path), var text = String(data: data, encoding: .utf8) else {
                problems.append(ConfigError(key: fileVariable, "cannot read \(path)"))
                continue
            }
            if text.hasSuffix("\r\n") { text.removeLast(2) } else if text.hasSuffix("\n") { text.removeLast() }
            expanded[name] = text
        }
        return (expanded, problems)
    }
}

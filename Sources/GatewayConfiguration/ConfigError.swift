import Yams

/// A configuration problem, printed as one line that names the offending key, e.g.
/// `config error: redis.poolsize: unknown key`.
package struct ConfigError: Error, CustomStringConvertible, Equatable {
    /// The dotted path of the key, `routes[0].timeout` style; empty for the whole file.
    package let key: String
    package let problem: String

    package init(key: String, _ problem: String) {
        self.key = key
        self.problem = problem
    }

    package init(path: [any CodingKey], _ problem: String) {
        self.init(key: ConfigError.keyPath(path), problem)
    }

    package var description: String {
        key.isEmpty ? "config error: \(problem)" : "config error: \(key): \(problem)"
    }

    /// The top-level section the key is in (`otp`, `routes[2]`, `GATEWAY_LISTEN`).
    package var section: String {
        String(key.prefix { $0 != "." })
    }

    package static func keyPath(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    /// Turns a decoder's error into a one-line `ConfigError`.
    package static func from(_ error: any Error) -> ConfigError {
        switch error {
        case let error as ConfigError:
            return error
        case DecodingError.typeMismatch(let type, let context):
            return ConfigError(path: context.codingPath, "expected \(ConfigError.describe(type))")
        case DecodingError.valueNotFound(let type, let context):
            return ConfigError(path: context.codingPath, "expected \(ConfigError.describe(type)), found nothing")
        case DecodingError.keyNotFound(let key, let context):
            return ConfigError(path: context.codingPath + [key], "is required")
        case DecodingError.dataCorrupted(let context):
            if let underlying = context.underlyingError as? ConfigError { return underlying }
            if let yaml = context.underlyingError as? YamlError { return ConfigError.from(yaml) }
            let reason = context.debugDescription.split(separator: "\n").first.map(String.init) ?? "invalid value"
            return ConfigError(path: context.codingPath, reason)
        case let error as YamlError:
            return ConfigError.from(error)
        default:
            let reason = "\(error)".split(separator: "\n").first.map(String.init) ?? "unreadable"
            return ConfigError(key: "", "cannot read the YAML: \(reason)")
        }
    }

    /// A YAML syntax error with where it is: `line 3, column 7: mapping values are not allowed
    /// in this context`.
    private static func from(_ error: YamlError) -> ConfigError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return ConfigError(key: "", "invalid YAML at line \(mark.line), column \(mark.column): \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return ConfigError(key: "", "invalid YAML at line \(context.mark.line), column \(context.mark.column): duplicated keys \(duplicates.joined(separator: ", "))")
        default:
            let reason = error.description.split(separator: "\n").first.map(String.init) ?? "unreadable"
            return ConfigError(key: "", "invalid YAML: \(reason)")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type: "a whole number"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is String.Type: "a string"
        default: "a \(type)"
        }
    }
}

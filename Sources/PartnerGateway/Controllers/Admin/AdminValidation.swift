import Foundation

/// Input rules of the admin API, in one place.
enum AdminValidation {
    /// Scopes look like `sdk_tokens:mint`: 1 to 64 of `a-z 0-9 _ : . -`.
    static func scopes(_ scopes: [String]?) throws -> [String]? {
        guard let scopes else { return nil }
        guard scopes.count <= 32 else { throw GatewayError.invalidRequest("at most 32 scopes") }
        for scope in scopes where !isScope(scope) {
            throw GatewayError.invalidRequest("scopes are 1 to 64 of a-z 0-9 _ : . -")
        }
        return scopes
    }

    static func isScope(_ scope: String) -> Bool {
        let bytes = scope.utf8
        guard (1...64).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"): true
            default: false
            }
        }
    }

    /// A duration in the spec's grammar; `0` alone is accepted and means zero.
    static func duration(_ text: String?, field: String) throws -> Duration? {
        guard let text else { return nil }
        if text == "0" { return .zero }
        guard let parsed = ConfigDuration(text) else {
            throw GatewayError.invalidRequest("\(field) must be a duration such as 30s, 10m, 24h or 90d")
        }
        return parsed.duration
    }

    static func name(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard (1...100).contains(trimmed.count), trimmed.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw GatewayError.invalidRequest("name must be 1 to 100 printable characters")
        }
        return trimmed
    }

    /// An id in a path: what the gateway issues (`ptr_`, `key_`, `usr_` plus hex) or nothing.
    static func id(_ text: String, prefix: String) throws -> String {
        guard text.hasPrefix(prefix), text.count <= 64, text.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) }) else {
            throw GatewayError.notFound(what: prefix == "ptr_" ? "partner" : prefix == "key_" ? "key" : "user")
        }
        return text
    }
}

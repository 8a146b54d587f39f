import Foundation
import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

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

    /// A duration in ``GatewayDuration``'s grammar, named by its field in the error.
    static func duration(_ text: String?, field: String) throws -> Duration? {
        guard let text else { return nil }
        do {
            return try GatewayDuration(parsing: text).duration
        } catch {
            throw GatewayError.invalidRequest("\(field): \(error.description)")
        }
    }

    /// A partner's or key's name: 1 to 100 printable characters, surrounding spaces dropped.
    static func name(_ name: String, field: String = "name") throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard (1...100).contains(trimmed.count), trimmed.unicodeScalars.allSatisfy(isPrintable) else {
            throw GatewayError.invalidRequest("\(field) must be 1 to 100 printable characters, without control or bidi formatting characters")
        }
        return trimmed
    }

    /// A partner's refill rate in requests per second.
    static func rate(_ rate: Double?) throws -> Double? {
        if let rate, !(rate > 0 && rate <= 1_000_000) { throw GatewayError.invalidRequest("rate must be between 0 and 1000000 requests per second") }
        return rate
    }

    /// A partner's burst, the capacity of its token bucket.
    static func burst(_ burst: Int?) throws -> Int? {
        if let burst, !(1...10_000_000).contains(burst) { throw GatewayError.invalidRequest("burst must be between 1 and 10000000") }
        return burst
    }

    /// A key's metadata: at most 16 entries; names 1 to 64 of `A-Z a-z 0-9 _ . -`, values up
    /// to 256 printable characters.
    static func meta(_ meta: [String: String]?) throws -> [String: String] {
        guard let meta else { return [:] }
        guard meta.count <= 16 else { throw GatewayError.invalidRequest("meta holds at most 16 entries") }
        for (name, value) in meta {
            guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy(isMetaNameByte) else {
                throw GatewayError.invalidRequest("meta names are 1 to 64 of A-Z a-z 0-9 _ . -")
            }
            guard value.count <= 256, value.unicodeScalars.allSatisfy(isPrintable) else {
                throw GatewayError.invalidRequest("meta values are at most 256 printable characters, without control or bidi formatting characters")
            }
        }
        return meta
    }

    /// `limit` and `after` of a list request.
    static func page(_ request: Request, defaultLimit: Int) throws -> PageRequest {
        let query = request.uri.queryParameters
        do {
            return try PageRequest(
                limit: query[Substring(PageRequest.limitParameter)].map(String.init),
                after: query[Substring(PageRequest.afterParameter)].map(String.init),
                defaultLimit: defaultLimit
            )
        } catch let error as InvalidPageRequest {
            throw GatewayError.invalidRequest(error.message)
        } catch {
            throw GatewayError.invalidRequest("limit or after is malformed")
        }
    }

    /// An id in a path: what the gateway issues (`ptr_`, `key_`, `usr_`, `adm_` plus hex) or nothing.
    static func id(_ text: String, prefix: String) throws -> String {
        guard text.hasPrefix(prefix), text.count <= 64, text.utf8.allSatisfy({ $0 == UInt8(ascii: "_") || ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 122) }) else {
            throw GatewayError.notFound(what: Self.idKinds[prefix] ?? "user")
        }
        return text
    }

    /// What each id prefix names, for a `404`.
    private static let idKinds = ["ptr_": "partner", "key_": "key", "adm_": "admin", "usr_": "user", "mbr_": "member"]

    /// A member's email: one address (`local@domain`, at most 254 characters, no space,
    /// control or bidi character, no quoting or comment), lowercase as stored and compared.
    static func email(_ text: String) throws -> String {
        let email = text.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard (3...254).contains(email.utf8.count), parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64,
            parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            email.unicodeScalars.allSatisfy({ isPrintable($0) && !" \"(),:;<>[\\]".unicodeScalars.contains($0) })
        else {
            throw GatewayError.invalidRequest("email must be one address such as asha@partner.example")
        }
        return email
    }

    /// A member's role: `partner_admin`, `developer` or `viewer`.
    static func memberRole(_ text: String) throws -> MemberRole {
        guard let role = MemberRole(rawValue: text) else {
            throw GatewayError.invalidRequest("role must be one of: \(MemberRole.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return role
    }

    /// How many live keys a partner's members may hold.
    static func maxKeys(_ value: Int?) throws -> Int? {
        if let value, !(1...1000).contains(value) { throw GatewayError.invalidRequest("max_keys must be between 1 and 1000") }
        return value
    }

    /// Not a C0 or C1 control, DEL, a line or paragraph separator, nor a bidi mark,
    /// embedding, override or isolate: these names are printed in operators' terminals and
    /// tables, where such characters move the cursor or reverse text (`pay\u{202E}gpj.exe`).
    /// Joiners (U+200C, U+200D) stay: Indic scripts are written with them.
    static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: false
        default: true
        }
    }

    private static func isMetaNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"): true
        default: false
        }
    }
}

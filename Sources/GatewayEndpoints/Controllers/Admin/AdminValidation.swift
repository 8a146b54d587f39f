import Foundation
import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

/// Input rules of the admin API, in one place.
enum AdminValidation {
    /// Scopes look like `sdk_tokens:mint`: 1 to 64 of `a-z 0-9 _ : . -`, at most 32.
    static func scopes(_ scopes: [String]?) throws -> [String]? {
        guard let scopes else { return nil }
        if let problem = AdminInputRules.scopesProblem(scopes) { throw GatewayError.invalidRequest(problem) }
        return scopes
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
        if let problem = AdminInputRules.nameProblem(name, field: field) { throw GatewayError.invalidRequest(problem) }
        return AdminInputRules.trimmedName(name)
    }

    /// A partner's refill rate in requests per second.
    static func rate(_ rate: Double?) throws -> Double? {
        if let rate, let problem = AdminInputRules.rateProblem(rate) { throw GatewayError.invalidRequest(problem) }
        return rate
    }

    /// A partner's burst, the capacity of its token bucket.
    static func burst(_ burst: Int?) throws -> Int? {
        if let burst, let problem = AdminInputRules.burstProblem(burst) { throw GatewayError.invalidRequest(problem) }
        return burst
    }

    /// A key's metadata: at most 16 entries; names 1 to 64 of `A-Z a-z 0-9 _ . -`, values up
    /// to 256 printable characters.
    static func meta(_ meta: [String: String]?) throws -> [String: String] {
        guard let meta else { return [:] }
        if let problem = AdminInputRules.metaProblem(meta) { throw GatewayError.invalidRequest(problem) }
        return meta
    }

    /// The id a client chose for a resource it creates (`partner_id`, `key_id`, `admin_id`):
    /// the form the gateway issues, or nil to have one issued.
    static func chosenID(_ id: String?, prefix: String, field: String) throws -> String? {
        guard let id else { return nil }
        guard AdminInputRules.isIssuedID(id, prefix: prefix) else {
            throw GatewayError.invalidRequest("\(field) must be \(prefix) and 16 lowercase hex characters")
        }
        return id
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

    /// A member's email (``AdminInputRules/emailProblem(_:)``), lowercase as stored and compared.
    static func email(_ text: String) throws -> String {
        let email = AdminInputRules.normalizedEmail(text)
        if let problem = AdminInputRules.emailProblem(email) { throw GatewayError.invalidRequest(problem) }
        return email
    }

    /// A member's role: `partner_admin`, `developer` or `viewer`.
    static func memberRole(_ text: String) throws -> MemberRole {
        guard let role = MemberRole(rawValue: text) else {
            throw GatewayError.invalidRequest(AdminInputRules.memberRoleProblem(text) ?? "role is not a member's role")
        }
        return role
    }

    /// How many live keys a partner's members may hold.
    static func maxKeys(_ value: Int?) throws -> Int? {
        if let value, let problem = AdminInputRules.maxKeysProblem(value) { throw GatewayError.invalidRequest(problem) }
        return value
    }
}

import Foundation
import GatewayContract

/// What the state files ask the gateway to hold: every file given, read and merged, checked
/// before anything is compared with the gateway. A section no file has (`partners`,
/// `admins`) is not managed: nothing in it is compared, changed or pruned.
public struct StateDocument: Sendable, Equatable {
    /// The schema version the files declare (`version: 1`), the only one this reads.
    public static let version = 1

    /// nil when no file has a `partners` section.
    public var partners: [DeclaredPartner]?
    /// nil when no file has an `admins` section.
    public var admins: [DeclaredAdmin]?

    public init(partners: [DeclaredPartner]? = nil, admins: [DeclaredAdmin]? = nil) {
        self.partners = partners
        self.admins = admins
    }
}

/// Where a declaration was read: what problems and the plan name.
public struct StateOrigin: Sendable, Hashable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let column: Int
    /// The entry's path in its file, `partners[0].keys[1]`.
    public let path: String

    public init(file: String, line: Int, column: Int, path: String) {
        self.file = file
        self.line = line
        self.column = column
        self.path = path
    }

    public var description: String { "\(file):\(line):\(column)" }
}

/// A partner as a file declares it, its defaults filled in.
public struct DeclaredPartner: Sendable, Equatable {
    /// Matched by id when given, else by name.
    public var id: String?
    public var name: String
    /// `active` or `disabled`.
    public var status = "active"
    public var rate = 50.0
    public var burst = 100
    public var scopes = ["sdk_tokens:mint"]
    /// Canonical ranges (`203.0.113.0/24`); empty for any address.
    public var allowedCIDRs: [String] = []
    public var quota: QuotaSetting?
    /// How many live keys its members may hold in the portal.
    public var maxKeys = AdminInputRules.defaultMaxKeys
    public var keys: [DeclaredKey] = []
    /// The people who sign in to its portal; what a partner's entry does not name is kept, or
    /// removed with prune, as its keys are.
    public var members: [DeclaredMember] = []
    public var origin: StateOrigin
    /// Where each field given was read, by its name.
    public var places: [String: StateOrigin] = [:]

    public init(id: String? = nil, name: String, origin: StateOrigin) {
        self.id = id
        self.name = name
        self.origin = origin
    }
}

/// A key as a file declares it: never its secret.
public struct DeclaredKey: Sendable, Equatable {
    /// Matched by id when given, else by name within its partner.
    public var id: String?
    public var name: String?
    /// `active`, `expiring` (rotated, in its grace period: only to describe such a key) or
    /// `revoked`.
    public var status = "active"
    /// nil: its partner's scopes.
    public var scopes: [String]?
    public var expiresAt: Date?
    public var allowedCIDRs: [String] = []
    public var quota: QuotaSetting?
    public var meta: [String: String] = [:]
    public var origin: StateOrigin
    /// Where each field given was read, by its name.
    public var places: [String: StateOrigin] = [:]

    public init(id: String? = nil, name: String? = nil, origin: StateOrigin) {
        self.id = id
        self.name = name
        self.origin = origin
    }
}

/// A partner's member as a file declares them: never a session or a sign-in code.
public struct DeclaredMember: Sendable, Equatable {
    /// Matched by id when given, else by email among its partner's members.
    public var id: String?
    /// Lowercase, as the gateway keeps it; one address is one member, of one partner.
    public var email: String
    public var name: String
    /// `partner_admin`, `developer` or `viewer`.
    public var role: String
    public var origin: StateOrigin
    /// Where each field given was read, by its name.
    public var places: [String: StateOrigin] = [:]

    public init(id: String? = nil, email: String, name: String, role: String, origin: StateOrigin) {
        self.id = id
        self.email = email
        self.name = name
        self.role = role
        self.origin = origin
    }
}

/// An admin credential as a file declares it: never its token.
public struct DeclaredAdmin: Sendable, Equatable {
    public var id: String?
    public var name: String
    public var role: String
    /// `active` or `revoked`.
    public var status = "active"
    public var expiresAt: Date?
    public var origin: StateOrigin
    /// Where each field given was read, by its name.
    public var places: [String: StateOrigin] = [:]

    public init(id: String? = nil, name: String, role: String, origin: StateOrigin) {
        self.id = id
        self.name = name
        self.role = role
        self.origin = origin
    }
}

/// Where a declaration's field was read, else where the declaration starts.
protocol Placed {
    var origin: StateOrigin { get }
    var places: [String: StateOrigin] { get }
}

extension Placed {
    func place(of field: String) -> StateOrigin {
        places[field] ?? StateOrigin(file: origin.file, line: origin.line, column: origin.column, path: origin.path + "." + field)
    }
}

extension DeclaredPartner: Placed {}
extension DeclaredKey: Placed {}
extension DeclaredMember: Placed {}
extension DeclaredAdmin: Placed {}

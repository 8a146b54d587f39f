import Foundation
import GatewayContract

/// One resource the plan changes: what, how, which fields from what to what, and the one
/// admin API call that makes it (a resource changes in one call, whole or not at all).
public struct StateChange: Sendable, Equatable {
    public enum Action: String, Sendable, Codable {
        case create, update
        /// What the files do not name, with `--prune`: a key or credential revoked, a member
        /// removed, a partner disabled (partners are never deleted).
        case remove
    }

    public enum Kind: String, Sendable, Codable {
        case partner, key, member, admin

        /// Whether creating one hands out a secret (a key's, a credential's token), which
        /// apply writes once to where the operator said.
        public var hasSecret: Bool { self == .key || self == .admin }
    }

    public var action: Action
    public var kind: Kind
    /// nil for a resource created without an id (the gateway issues one).
    public var id: String?
    /// A member's email: what the files match a member by.
    public var name: String?
    /// A key's or member's partner, by name.
    public var partner: String?
    public var fields: [FieldChange] = []
    /// Why the admin API cannot make this change; nil when it can.
    public var blocked: String?
    /// The call that makes it; nil when blocked.
    public var operation: StateOperation?
    /// Where the files declare the resource (nil for a removal).
    public var origin: StateOrigin?

    public init(action: Action, kind: Kind, id: String?, name: String?, partner: String? = nil) {
        self.action = action
        self.kind = kind
        self.id = id
        self.name = name
        self.partner = partner
    }
}

/// A field's value before and after (``StateValue/none`` for a field not set).
public struct FieldChange: Sendable, Equatable, Encodable {
    public let field: String
    public let from: StateValue
    public let to: StateValue

    public init(_ field: String, from: StateValue, to: StateValue) {
        self.field = field
        self.from = from
        self.to = to
    }
}

/// A value of a state file's field, as a diff prints it: `50`, `"checkout"`,
/// `[sdk_tokens:mint]`, `100000/month`, `none`; in JSON its natural form.
public enum StateValue: Sendable, Hashable, Encodable, CustomStringConvertible {
    case none
    case text(String)
    /// Words of the schema (`active`, `operator`): printed without quotes.
    case word(String)
    case number(Double)
    case list([String])
    case map([String: String])
    case quota(QuotaSetting)
    case time(Date)

    public var description: String {
        switch self {
        case .none: "none"
        case .text(let text): Self.quoted(text)
        case .word(let word): word
        case .number(let number): StateExport.number(number)
        case .list(let items): "[" + items.joined(separator: ", ") + "]"
        case .map(let map): "{" + map.sorted { $0.key < $1.key }.map { "\($0.key): \(Self.quoted($0.value))" }.joined(separator: ", ") + "}"
        case .quota(let quota): "\(quota.limit)/\(quota.period)"
        case .time(let date): StateTime.text(date)
        }
    }

    /// In quotes, with `"`, `\` and control characters escaped: a name can never end the
    /// line or move the terminal's cursor.
    static func quoted(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            default:
                escaped += AdminInputRules.isPrintable(scalar) ? String(scalar) : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return "\"" + escaped + "\""
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .none: try container.encodeNil()
        case .text(let text), .word(let text): try container.encode(text)
        case .number(let number): try container.encode(number)
        case .list(let items): try container.encode(items)
        case .map(let map): try container.encode(map)
        case .quota(let quota): try container.encode(quota)
        case .time(let date): try container.encode(StateTime.text(date))
        }
    }
}

/// The admin API call that makes a change.
public enum StateOperation: Sendable, Equatable {
    case createPartner(NewPartner)
    case updatePartner(id: String, PartnerUpdate, revision: Int)
    case createKey(partner: PartnerReference, NewKey)
    case updateKey(id: String, KeyUpdate, revision: Int)
    case revokeKey(id: String, revision: Int)
    case createMember(partner: PartnerReference, NewMember)
    case updateMember(partnerID: String, id: String, MemberUpdate, revision: Int)
    case removeMember(partnerID: String, id: String, revision: Int)
    case createAdmin(NewAdmin)
    case revokeAdmin(id: String, revision: Int)
}

/// A new key's or member's partner: one the gateway holds, or one created in the same apply
/// without an id of its own (whose id is known once it is created).
public enum PartnerReference: Sendable, Hashable {
    case id(String)
    case created(name: String)
}

import Foundation
import GatewayContract
import GatewayPrimitives
import Yams

/// The fields of each entry of a state file, checked one by one with the admin API's rules.
extension DeclaredPartner {
    static let fields = ["id", "name", "status", "rate", "burst", "scopes", "allowed_cidrs", "quota", "max_keys", "keys", "members"]
    static let statuses = ["active", "disabled"]

    static func read(_ value: StateNodeReading.Value, reading: StateNodeReading) -> DeclaredPartner? {
        guard let fields = reading.fields(of: value, allowed: Self.fields) else { return nil }
        let before = reading.problems.count
        guard let nameValue = fields["name"] else {
            reading.problem(at: value.node, value.path + ".name", "missing: a partner needs a name")
            return nil
        }
        var partner = DeclaredPartner(name: StateFields.name(nameValue, reading: reading) ?? "", origin: reading.origin(of: value))
        partner.places = fields.mapValues(reading.origin(of:))
        partner.id = fields["id"].flatMap { StateFields.id($0, prefix: "ptr_", reading: reading) }
        if let status = fields["status"] { partner.status = StateFields.choice(status, of: Self.statuses, reading: reading) ?? partner.status }
        if let rate = fields["rate"], let number = reading.number(rate) {
            if let problem = AdminInputRules.rateProblem(number) { reading.problem(at: rate.node, rate.path, problem) }
            partner.rate = number
        }
        if let burst = fields["burst"], let number = reading.integer(burst) {
            if let problem = AdminInputRules.burstProblem(number) { reading.problem(at: burst.node, burst.path, problem) }
            partner.burst = number
        }
        if let scopes = fields["scopes"] { partner.scopes = StateFields.scopes(scopes, reading: reading) ?? [] }
        if let cidrs = fields["allowed_cidrs"] { partner.allowedCIDRs = StateFields.allowedCIDRs(cidrs, reading: reading) ?? [] }
        if let quota = fields["quota"] { partner.quota = StateFields.quota(quota, reading: reading) }
        if let maxKeys = fields["max_keys"], let number = reading.integer(maxKeys) {
            if let problem = AdminInputRules.maxKeysProblem(number) { reading.problem(at: maxKeys.node, maxKeys.path, problem) }
            partner.maxKeys = number
        }
        if let keys = fields["keys"] {
            partner.keys = reading.entries(of: keys)?.compactMap { DeclaredKey.read($0, partnerNamed: false, reading: reading) } ?? []
        }
        if let members = fields["members"] {
            partner.members = reading.entries(of: members)?.compactMap { DeclaredMember.read($0, reading: reading) } ?? []
        }
        return reading.problems.count == before ? partner : nil
    }
}

extension DeclaredKey {
    static let fields = ["id", "name", "status", "scopes", "expires_at", "allowed_cidrs", "quota", "meta"]
    static let statuses = ["active", "expiring", "revoked"]

    /// `partnerNamed`: an entry of a top-level `keys` section, which names its partner.
    static func read(_ value: StateNodeReading.Value, partnerNamed: Bool, reading: StateNodeReading) -> DeclaredKey? {
        guard let fields = reading.fields(of: value, allowed: Self.fields + (partnerNamed ? ["partner"] : [])) else { return nil }
        let before = reading.problems.count
        var key = DeclaredKey(origin: reading.origin(of: value))
        key.places = fields.mapValues(reading.origin(of:))
        key.id = fields["id"].flatMap { StateFields.id($0, prefix: "key_", reading: reading) }
        if let name = fields["name"], !reading.isNull(name) { key.name = StateFields.name(name, reading: reading) }
        if let status = fields["status"] { key.status = StateFields.choice(status, of: Self.statuses, reading: reading) ?? key.status }
        if let scopes = fields["scopes"] { key.scopes = StateFields.scopes(scopes, reading: reading) }
        if let expiry = fields["expires_at"], !reading.isNull(expiry) { key.expiresAt = reading.date(expiry) }
        if let cidrs = fields["allowed_cidrs"] { key.allowedCIDRs = StateFields.allowedCIDRs(cidrs, reading: reading) ?? [] }
        if let quota = fields["quota"] { key.quota = StateFields.quota(quota, reading: reading) }
        if let meta = fields["meta"], let map = reading.textMap(meta) {
            if let problem = AdminInputRules.metaProblem(map) { reading.problem(at: meta.node, meta.path, problem) }
            key.meta = map
        }
        if key.id == nil, key.name == nil, reading.problems.count == before {
            reading.problem(at: value.node, value.path, "a key needs an id or a name: it is matched by its id, else by its name within its partner")
        }
        return reading.problems.count == before ? key : nil
    }
}

extension StateFile.PartnerKey {
    static func read(_ value: StateNodeReading.Value, reading: StateNodeReading) -> StateFile.PartnerKey? {
        guard let mapping = value.node.mapping else {
            _ = reading.fields(of: value, allowed: DeclaredKey.fields + ["partner"])
            return nil
        }
        guard let partnerNode = mapping["partner"] else {
            reading.problem(at: value.node, value.path + ".partner", "missing: a key listed under keys names its partner")
            return nil
        }
        let partnerValue = StateNodeReading.Value(node: partnerNode, path: value.path + ".partner")
        guard let key = DeclaredKey.read(value, partnerNamed: true, reading: reading), let partner = reading.text(partnerValue) else { return nil }
        return StateFile.PartnerKey(partner: AdminInputRules.trimmedName(partner), partnerOrigin: reading.origin(of: partnerValue), key: key)
    }
}

extension DeclaredMember {
    static let fields = ["id", "email", "name", "role"]

    static func read(_ value: StateNodeReading.Value, reading: StateNodeReading) -> DeclaredMember? {
        guard let fields = reading.fields(of: value, allowed: Self.fields) else { return nil }
        let before = reading.problems.count
        guard let emailValue = fields["email"], let nameValue = fields["name"], let roleValue = fields["role"] else {
            reading.problem(at: value.node, value.path, "a member needs an email, a name and a role")
            return nil
        }
        var email = ""
        if let text = reading.text(emailValue) {
            email = AdminInputRules.normalizedEmail(text)
            if let problem = AdminInputRules.emailProblem(email) { reading.problem(at: emailValue.node, emailValue.path, problem) }
        }
        let name = StateFields.name(nameValue, reading: reading) ?? ""
        let role = StateFields.choice(roleValue, of: AdminInputRules.memberRoles, reading: reading) ?? ""
        var member = DeclaredMember(email: email, name: name, role: role, origin: reading.origin(of: value))
        member.places = fields.mapValues(reading.origin(of:))
        member.id = fields["id"].flatMap { StateFields.id($0, prefix: "mbr_", reading: reading) }
        return reading.problems.count == before ? member : nil
    }
}

extension DeclaredAdmin {
    static let fields = ["id", "name", "role", "status", "expires_at"]
    static let statuses = ["active", "revoked"]

    static func read(_ value: StateNodeReading.Value, reading: StateNodeReading) -> DeclaredAdmin? {
        guard let fields = reading.fields(of: value, allowed: Self.fields) else { return nil }
        let before = reading.problems.count
        guard let nameValue = fields["name"], let roleValue = fields["role"] else {
            reading.problem(at: value.node, value.path, "an admin credential needs a name and a role")
            return nil
        }
        let name = StateFields.name(nameValue, reading: reading) ?? ""
        let role = StateFields.choice(roleValue, of: AdminInputRules.roles, reading: reading) ?? ""
        var admin = DeclaredAdmin(name: name, role: role, origin: reading.origin(of: value))
        admin.places = fields.mapValues(reading.origin(of:))
        admin.id = fields["id"].flatMap { StateFields.id($0, prefix: "adm_", reading: reading) }
        if let status = fields["status"] { admin.status = StateFields.choice(status, of: Self.statuses, reading: reading) ?? admin.status }
        if let expiry = fields["expires_at"], !reading.isNull(expiry) { admin.expiresAt = reading.date(expiry) }
        return reading.problems.count == before ? admin : nil
    }
}

/// The values several entries share.
enum StateFields {
    static func id(_ value: StateNodeReading.Value, prefix: String, reading: StateNodeReading) -> String? {
        if reading.isNull(value) { return nil }
        guard let text = reading.text(value) else { return nil }
        guard AdminInputRules.isIssuedID(text, prefix: prefix) else {
            reading.problem(at: value.node, value.path, "\(reading.quoted(value, text)) is not an id: \(prefix) and 16 lowercase hex characters")
            return nil
        }
        return text
    }

    static func name(_ value: StateNodeReading.Value, reading: StateNodeReading) -> String? {
        guard let text = reading.text(value) else { return nil }
        if let problem = AdminInputRules.nameProblem(text) {
            reading.problem(at: value.node, value.path, problem)
            return nil
        }
        return AdminInputRules.trimmedName(text)
    }

    static func choice(_ value: StateNodeReading.Value, of choices: [String], reading: StateNodeReading) -> String? {
        guard let text = reading.text(value) else { return nil }
        guard choices.contains(text) else {
            reading.problem(at: value.node, value.path, "\(reading.quoted(value, text)) is not one of: \(choices.joined(separator: ", "))")
            return nil
        }
        return text
    }

    static func scopes(_ value: StateNodeReading.Value, reading: StateNodeReading) -> [String]? {
        guard let scopes = reading.texts(value) else { return nil }
        if let problem = AdminInputRules.scopesProblem(scopes) {
            reading.problem(at: value.node, value.path, problem)
            return nil
        }
        if let repeated = scopes.enumerated().first(where: { scopes[..<$0.offset].contains($0.element) }) {
            reading.problem(at: value.node, value.path, "\(repeated.element) is listed twice")
            return nil
        }
        return scopes
    }

    /// Each range as the gateway keeps it (`10.0.0.1` is `10.0.0.1/32`), once.
    static func allowedCIDRs(_ value: StateNodeReading.Value, reading: StateNodeReading) -> [String]? {
        guard let entries = reading.entries(of: value) else { return nil }
        guard entries.count <= AdminInputRules.maximumAllowedCIDRs else {
            reading.problem(at: value.node, value.path, "at most \(AdminInputRules.maximumAllowedCIDRs) ranges")
            return nil
        }
        var ranges: [String] = []
        for entry in entries {
            guard let text = reading.text(entry) else { continue }
            guard let range = CIDR(text.trimmingCharacters(in: .whitespaces)) else {
                reading.problem(at: entry.node, entry.path, "\(reading.quoted(entry, text)) is not an IPv4 or IPv6 address or CIDR range")
                continue
            }
            if !ranges.contains(range.description) { ranges.append(range.description) }
        }
        return ranges
    }

    /// `{limit: 100000, period: month}`; null for none.
    static func quota(_ value: StateNodeReading.Value, reading: StateNodeReading) -> QuotaSetting? {
        if reading.isNull(value) { return nil }
        guard let fields = reading.fields(of: value, allowed: ["limit", "period"]) else { return nil }
        guard let limitValue = fields["limit"], let periodValue = fields["period"] else {
            reading.problem(at: value.node, value.path, "a quota is a limit and a period: {limit: 100000, period: month}")
            return nil
        }
        guard let limit = reading.integer(limitValue), let period = reading.text(periodValue) else { return nil }
        let quota = QuotaSetting(limit: limit, period: period)
        guard AdminInputRules.quotaPeriods.contains(period) else {
            reading.problem(at: periodValue.node, periodValue.path, "\"\(period)\" is not a quota period: day or month")
            return nil
        }
        if let problem = AdminInputRules.quotaProblem(quota) {
            reading.problem(at: limitValue.node, limitValue.path, problem)
            return nil
        }
        return quota
    }
}

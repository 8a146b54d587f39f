import Foundation

/// The admin API's input rules for partners, keys, members and admin credentials, in one
/// place: the gateway refuses a request that breaks one (`400 INVALID_REQUEST` with the
/// message), the portal refuses its members' requests by the same rules, and gatewayctl
/// checks a state file against them before it changes anything.
///
/// Each check answers nil for a good value, else the message for people.
public enum AdminInputRules {
    public static let maximumScopes = 32
    public static let maximumAllowedCIDRs = 64
    public static let maximumMetaEntries = 16
    public static let maximumRate = 1_000_000.0
    public static let bursts: ClosedRange<Int> = 1...10_000_000
    public static let quotaLimits: ClosedRange<Int> = 1...1_000_000_000_000
    public static let quotaPeriods = ["day", "month"]
    public static let roles = ["owner", "operator", "support", "auditor", "verifier"]
    /// A partner member's roles, widest first.
    public static let memberRoles = ["partner_admin", "developer", "viewer"]
    /// A partner's `max_keys`: how many live keys its members may hold (20 unless set).
    public static let maxKeysRange: ClosedRange<Int> = 1...1000
    public static let defaultMaxKeys = 20

    /// At most 32 scopes, each 1 to 64 of `a-z 0-9 _ : . -` (`sdk_tokens:mint`).
    public static func scopesProblem(_ scopes: [String]) -> String? {
        guard scopes.count <= maximumScopes else { return "at most \(maximumScopes) scopes" }
        guard scopes.allSatisfy(isScope) else { return "scopes are 1 to 64 of a-z 0-9 _ : . -" }
        return nil
    }

    public static func isScope(_ scope: String) -> Bool {
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

    /// A partner's, key's or admin credential's name as kept: surrounding spaces dropped.
    public static func trimmedName(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespaces)
    }

    /// 1 to 100 printable characters once trimmed (``trimmedName(_:)``).
    public static func nameProblem(_ name: String, field: String = "name") -> String? {
        let trimmed = trimmedName(name)
        guard (1...100).contains(trimmed.count), trimmed.unicodeScalars.allSatisfy(isPrintable) else {
            return "\(field) must be 1 to 100 printable characters, without control or bidi formatting characters"
        }
        return nil
    }

    /// A partner's refill rate in requests per second: above 0, at most 1000000.
    public static func rateProblem(_ rate: Double) -> String? {
        rate > 0 && rate <= maximumRate ? nil : "rate must be between 0 and 1000000 requests per second"
    }

    /// A partner's burst, the capacity of its token bucket.
    public static func burstProblem(_ burst: Int) -> String? {
        bursts.contains(burst) ? nil : "burst must be between 1 and 10000000"
    }

    /// At most 16 entries; names 1 to 64 of `A-Z a-z 0-9 _ . -`, values up to 256 printable
    /// characters.
    public static func metaProblem(_ meta: [String: String]) -> String? {
        guard meta.count <= maximumMetaEntries else { return "meta holds at most \(maximumMetaEntries) entries" }
        for (name, value) in meta {
            guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy(isMetaNameByte) else {
                return "meta names are 1 to 64 of A-Z a-z 0-9 _ . -"
            }
            guard value.count <= 256, value.unicodeScalars.allSatisfy(isPrintable) else {
                return "meta values are at most 256 printable characters, without control or bidi formatting characters"
            }
        }
        return nil
    }

    /// `{"limit": 1 to 10^12, "period": "day" | "month"}`.
    public static func quotaProblem(_ quota: QuotaSetting) -> String? {
        guard quotaPeriods.contains(quota.period) else { return "quota.period is day or month" }
        guard quotaLimits.contains(quota.limit) else { return "quota.limit is a whole number from 1 to 1000000000000" }
        return nil
    }

    /// A member's email as kept and compared: surrounding spaces dropped, lowercase.
    public static func normalizedEmail(_ email: String) -> String {
        email.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// One address (`local@domain`, at most 254 characters, the local part at most 64, a dot
    /// in the domain), without a space, control or bidi character, quoting or comment.
    public static func emailProblem(_ email: String) -> String? {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard (3...254).contains(email.utf8.count), parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64,
            parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            email.unicodeScalars.allSatisfy({ isPrintable($0) && !" \"(),:;<>[\\]".unicodeScalars.contains($0) })
        else {
            return "email must be one address such as asha@partner.example"
        }
        return nil
    }

    /// `partner_admin`, `developer` or `viewer`.
    public static func memberRoleProblem(_ role: String) -> String? {
        memberRoles.contains(role) ? nil : "role must be one of: \(memberRoles.joined(separator: ", "))"
    }

    /// A whole number from 1 to 1000.
    public static func maxKeysProblem(_ maxKeys: Int) -> String? {
        maxKeysRange.contains(maxKeys) ? nil : "max_keys must be between 1 and 1000"
    }

    /// An id a client chose for a resource it creates: the form the gateway issues, the
    /// prefix and 16 lowercase hex characters (`ptr_4f9c2a7d1e3b5a60`).
    public static func isIssuedID(_ id: String, prefix: String) -> Bool {
        guard id.hasPrefix(prefix) else { return false }
        let hex = id.utf8.dropFirst(prefix.utf8.count)
        return hex.count == 16 && hex.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    /// Not a C0 or C1 control, DEL, a line or paragraph separator, nor a bidi mark,
    /// embedding, override or isolate: these names are printed in operators' terminals and
    /// tables, where such characters move the cursor or reverse text (`pay\u{202E}gpj.exe`).
    /// Joiners (U+200C, U+200D) stay: Indic scripts are written with them.
    public static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
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

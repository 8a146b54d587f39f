import Foundation

/// `If-Match` on the admin API's changes to a partner, key or admin credential: the
/// resource's `revision` as its entity tag, in quotes (`If-Match: "3"`). The change is made
/// only if the resource is still at that revision, in the same atomic step as the change;
/// otherwise it is `412 PRECONDITION_FAILED` and nothing changes. `*` (or no header) makes
/// the change whatever the revision.
public enum RevisionPrecondition {
    public static let headerName = "If-Match"

    /// The header's value for `revision`.
    public static func header(for revision: Int) -> String {
        "\"\(revision)\""
    }

    /// What the header asks: `.some(revision)`, `.some(nil)` for `*`, or nil when it is not
    /// one quoted revision or `*` (weak tags and lists included: a change is made against one
    /// revision it was planned on).
    public static func expectedRevision(_ header: String) -> Int?? {
        let text = header.trimmingCharacters(in: .whitespaces)
        if text == "*" { return .some(nil) }
        guard text.count >= 3, text.first == "\"", text.last == "\"" else { return nil }
        let digits = text.dropFirst().dropLast()
        guard digits.count <= 18, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let revision = Int(digits) else { return nil }
        return .some(revision)
    }

    /// The message of `412 PRECONDITION_FAILED`.
    public static func staleMessage(_ what: String, expected: Int) -> String {
        "\(what) changed since revision \(expected): read it again before changing it"
    }
}

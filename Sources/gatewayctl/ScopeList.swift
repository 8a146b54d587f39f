/// `--scopes s1,s2`: one comma-separated value rather than a repeated option, as the admin
/// docs write it.
struct ScopeList: Equatable {
    let scopes: [String]

    /// Trims spaces and drops repeats; an empty entry (`a,,b`, a trailing comma) is rejected
    /// because it is almost always a typo.
    init(parsing text: String) throws(InvalidScopeList) {
        var scopes: [String] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let scope = entry.trimmingSpaces()
            guard !scope.isEmpty, !scope.contains(where: \.isWhitespace) else { throw InvalidScopeList() }
            if !scopes.contains(scope) { scopes.append(scope) }
        }
        self.scopes = scopes
    }
}

struct InvalidScopeList: Error, CustomStringConvertible {
    var description: String { "expected comma-separated scopes without spaces or empty entries, such as sdk_tokens:mint" }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}

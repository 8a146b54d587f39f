/// Ids given on the command line (`ptr_...`, `key_...`, a user id). An empty one would
/// produce a path such as `/v1/keys//revoke`, whose 404 would not say what went wrong.
enum Identifier {
    static func parse(_ text: String) throws(EmptyIdentifier) -> String {
        guard !text.isEmpty, !text.allSatisfy(\.isWhitespace) else { throw EmptyIdentifier() }
        return text
    }
}

struct EmptyIdentifier: Error, CustomStringConvertible {
    var description: String { "an id must not be empty" }
}

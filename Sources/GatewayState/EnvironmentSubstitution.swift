import Foundation

/// `${NAME}` in a state file's values: the environment variable's value, so one file serves
/// every environment (`rate: ${PARTNER_RATE}`). `${NAME:-fallback}` falls back when the
/// variable is unset or empty; `$${` is a literal `${`. A variable that is not set (without a
/// fallback) is an error, never an empty value.
struct EnvironmentSubstitution: Sendable {
    let environment: [String: String]

    /// Why a value could not be substituted.
    struct Failure: Error, Equatable {
        let message: String
    }

    func substitute(_ text: String) throws(Failure) -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            result += rest[..<dollar]
            let after = rest[dollar...]
            if after.hasPrefix("$${") {
                result += "${"
                rest = after.dropFirst(3)
            } else if after.hasPrefix("${") {
                guard let close = after.firstIndex(of: "}") else {
                    throw Failure(message: "\"${\" without a closing \"}\" (write $${ for a literal ${)")
                }
                let inside = after[after.index(after.startIndex, offsetBy: 2)..<close]
                result += try value(of: inside)
                rest = after[after.index(after: close)...]
            } else {
                result += "$"
                rest = after.dropFirst()
            }
        }
        return result + rest
    }

    private func value(of reference: Substring) throws(Failure) -> String {
        let name: Substring
        var fallback: Substring?
        if let separator = reference.range(of: ":-") {
            name = reference[..<separator.lowerBound]
            fallback = reference[separator.upperBound...]
        } else {
            name = reference
        }
        guard Self.isName(name) else {
            throw Failure(message: "\"${\(reference)}\": an environment variable's name is letters, digits and _, not starting with a digit")
        }
        if let value = environment[String(name)], !(value.isEmpty && fallback != nil) { return value }
        if let fallback { return String(fallback) }
        throw Failure(message: "the environment variable \(name) is not set")
    }

    private static func isName(_ text: Substring) -> Bool {
        guard let first = text.first, !first.isNumber else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }
}

import Foundation
import Yams

/// One file's YAML nodes as the reader walks them, each value with its place (Yams keeps the
/// line and column of every node): typed values out, every problem met on the way collected,
/// since a file is refused whole and its author wants every mistake at once.
final class StateNodeReading {
    let file: String
    private let substitution: EnvironmentSubstitution
    private(set) var problems: [StateProblem] = []

    init(file: String, substitution: EnvironmentSubstitution) {
        self.file = file
        self.substitution = substitution
    }

    /// A value and where it is: its node and its path in the file (`partners[0].rate`).
    struct Value {
        let node: Node
        let path: String
    }

    func problem(at node: Node?, _ path: String, _ message: String) {
        problem(mark: node?.mark, path, message)
    }

    /// At the file's start when there is no place to name.
    func problem(mark: Mark?, _ path: String, _ message: String) {
        problems.append(StateProblem(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, field: path, message: message))
    }

    func origin(of value: Value) -> StateOrigin {
        StateOrigin(file: file, line: value.node.mark?.line ?? 1, column: value.node.mark?.column ?? 1, path: value.path)
    }

    /// A mapping's values by key. A key not in `allowed` or given twice is a problem (the
    /// first value counts).
    func fields(of value: Value, allowed: [String]) -> [String: Value]? {
        guard case .mapping(let mapping) = value.node else {
            problem(at: value.node, value.path, "expected a mapping of \(allowed.joined(separator: ", "))")
            return nil
        }
        var fields: [String: Value] = [:]
        for (keyNode, valueNode) in mapping {
            guard case .scalar(let key) = keyNode else {
                problem(at: keyNode, value.path, "a key must be plain text")
                continue
            }
            let path = value.path.isEmpty ? key.string : "\(value.path).\(key.string)"
            if !allowed.contains(key.string) {
                problem(at: keyNode, path, "unknown field (expected one of: \(allowed.joined(separator: ", ")))")
            } else if let first = fields[key.string] {
                problem(at: keyNode, path, "given twice (first at line \(first.node.mark?.line ?? 1))")
            } else {
                fields[key.string] = Value(node: valueNode, path: path)
            }
        }
        return fields
    }

    /// The entries of a sequence, each with its index in its path (`partners[2]`).
    func entries(of value: Value) -> [Value]? {
        if isNull(value) { return [] }
        guard case .sequence(let sequence) = value.node else {
            problem(at: value.node, value.path, "expected a list")
            return nil
        }
        return sequence.enumerated().map { Value(node: $1, path: "\(value.path)[\($0)]") }
    }

    /// `null`, `~` or nothing: a value left out.
    func isNull(_ value: Value) -> Bool {
        guard case .scalar(let scalar) = value.node else { return false }
        return scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    /// A scalar's text with `${NAME}` substituted; nil (a problem recorded) for anything else.
    func text(_ value: Value) -> String? {
        guard case .scalar(let scalar) = value.node else {
            problem(at: value.node, value.path, "expected a single value, not a list or mapping")
            return nil
        }
        do {
            return try substitution.substitute(scalar.string)
        } catch {
            problem(at: value.node, value.path, error.message)
            return nil
        }
    }

    /// A value as a message quotes it: as written when it holds `${NAME}`, so that an error
    /// never prints an environment variable's value, which may be a secret.
    func quoted(_ value: Value, _ text: String) -> String {
        if case .scalar(let scalar) = value.node, scalar.string.contains("${") { return "\"\(scalar.string)\" (from the environment)" }
        return "\"\(text)\""
    }

    func number(_ value: Value) -> Double? {
        guard let text = text(value) else { return nil }
        guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else {
            problem(at: value.node, value.path, "\(quoted(value, text)) is not a number")
            return nil
        }
        return number
    }

    func integer(_ value: Value) -> Int? {
        guard let text = text(value) else { return nil }
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
            problem(at: value.node, value.path, "\(quoted(value, text)) is not a whole number")
            return nil
        }
        return number
    }

    /// A list of texts (`[sdk_tokens:mint, rides:read]`).
    func texts(_ value: Value) -> [String]? {
        guard let entries = entries(of: value) else { return nil }
        let texts = entries.compactMap(text)
        return texts.count == entries.count ? texts : nil
    }

    /// A mapping of texts to texts (`meta`), in the file's order.
    func textMap(_ value: Value) -> [String: String]? {
        if isNull(value) { return [:] }
        guard case .mapping(let mapping) = value.node else {
            problem(at: value.node, value.path, "expected a mapping of names to values")
            return nil
        }
        var result: [String: String] = [:]
        var complete = true
        for (keyNode, valueNode) in mapping {
            guard case .scalar(let key) = keyNode else {
                problem(at: keyNode, value.path, "a name must be plain text")
                complete = false
                continue
            }
            let entry = Value(node: valueNode, path: "\(value.path).\(key.string)")
            guard result[key.string] == nil else {
                problem(at: keyNode, entry.path, "given twice")
                complete = false
                continue
            }
            guard let text = text(entry) else {
                complete = false
                continue
            }
            result[key.string] = text
        }
        return complete ? result : nil
    }

    /// An RFC 3339 time (`2027-01-31T00:00:00Z`).
    func date(_ value: Value) -> Date? {
        guard let text = text(value) else { return nil }
        guard let date = StateTime.date(text) else {
            problem(at: value.node, value.path, "\(quoted(value, text)) is not an RFC 3339 time such as 2027-01-31T00:00:00Z")
            return nil
        }
        return date
    }
}

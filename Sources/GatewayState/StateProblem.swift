/// Why a state file is refused, at its place: `state/prod.yaml:12:9: partners[0].keys[1].scopes:
/// rides:write is not a scope of partner NammaYatri`.
public struct StateProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let column: Int
    /// The field's path in its file (`partners[0].rate`); empty for the file as a whole.
    public let field: String
    public let message: String

    public init(file: String, line: Int, column: Int, field: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.message = message
    }

    public init(at origin: StateOrigin, field: String? = nil, _ message: String) {
        self.init(file: origin.file, line: origin.line, column: origin.column, field: field ?? origin.path, message: message)
    }

    public var description: String {
        "\(file):\(line):\(column): " + (field.isEmpty ? "" : "\(field): ") + message
    }
}

/// Every problem found in the files, in file and line order: a file is refused whole.
public struct StateProblems: Error, Sendable, Hashable, CustomStringConvertible {
    public let problems: [StateProblem]

    public init(_ problems: [StateProblem]) {
        self.problems = problems.sorted { ($0.file, $0.line, $0.column, $0.field) < ($1.file, $1.line, $1.column, $1.field) }
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

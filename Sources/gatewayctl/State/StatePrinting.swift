import GatewayState

/// A plan as `diff` and `apply` print it: the text for people, or one JSON or YAML document;
/// notes (what is kept without `--prune`) on stderr.
enum StatePrinting {
    /// `printer` nil: the text on stderr, when stdout is for something else (secrets).
    static func show(_ plan: StatePlan, printer: Printer?) throws {
        switch printer?.format {
        case .json: print(try Document.json(plan))
        case .yaml: print(try Document.yaml(plan), terminator: "")
        case .table, .csv: print(plan.text, terminator: "")
        case nil: StandardError.write(plan.text)
        }
        for note in plan.notes { StandardError.writeLine("note: \(note)") }
    }
}

/// Prints a command's answer as `--json` asked: the records as one JSON document, or as a
/// table followed by any notes meant for people only.
struct Printer {
    let json: Bool

    func show<Record: Encodable & TableRepresentable>(_ record: Record, notes: [String] = []) throws {
        if json {
            try JSONOutput.print(record)
        } else {
            print(Table([record]).rendered())
            notes.forEach { print($0) }
        }
    }

    func show<Record: Encodable & TableRepresentable>(_ records: [Record]) throws {
        if json {
            try JSONOutput.print(records)
        } else {
            print(Table(records).rendered())
        }
    }

    /// The notes under a new key's table: the key alone on a line, and why to copy it now.
    static func oneTimeKeyNotes(_ key: String) -> [String] {
        ["", "key: \(key)", "store it now: it is not shown again."]
    }
}

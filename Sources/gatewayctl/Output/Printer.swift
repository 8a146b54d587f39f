import Foundation
import GatewayContract

/// Prints a command's answer in the format asked for: the records as one JSON or YAML
/// document, or as a table followed by any notes meant for people only.
struct Printer {
    let format: OutputFormat
    /// Whether tables get their header row (`--no-headers` for `cut` and `while read`).
    var headers = true

    func show<Record: Encodable & TableRepresentable>(_ record: Record, notes: [String] = []) throws {
        switch format {
        case .json: print(try Document.json(record))
        case .yaml: print(try Document.yaml(record), terminator: "")
        case .csv: print(CSV.rendered(Table([record]), headers: headers), terminator: "")
        case .table:
            print(Table([record]).rendered(headers: headers))
            notes.forEach { print($0) }
        }
    }

    /// A document whose table is a list of rows in it (a usage report's days).
    func show<Row: TableRepresentable>(_ document: some Encodable, rows: [Row]) throws {
        switch format {
        case .json: print(try Document.json(document))
        case .yaml: print(try Document.yaml(document), terminator: "")
        case .csv: print(CSV.rendered(Table(rows), headers: headers), terminator: "")
        case .table:
            let table = Table(rows).rendered(headers: headers)
            if !table.isEmpty { print(table) }
        }
    }

    /// A page of a list. In a table, where the next page starts is said on stderr so stdout
    /// stays rows only; the documents carry it as `next_cursor`.
    func show<Record: Codable & Sendable & Hashable & TableRepresentable>(_ page: Page<Record>) throws {
        switch format {
        case .json: print(try Document.json(page))
        case .yaml: print(try Document.yaml(page), terminator: "")
        case .csv:
            print(CSV.rendered(Table(page.items), headers: headers), terminator: "")
            if let next = page.nextCursor {
                StandardError.writeLine("more: add --after \(next) for the next page")
            }
        case .table:
            let table = Table(page.items).rendered(headers: headers)
            if !table.isEmpty { print(table) }
            if let next = page.nextCursor {
                StandardError.writeLine("more: add --after \(next) for the next page")
            }
        }
    }

    /// A note for people that must not end up in a JSON or YAML document: to stdout under a
    /// table, to stderr otherwise.
    func note(_ line: String) {
        if format == .table { print(line) } else { StandardError.writeLine(line) }  // never into a CSV either
    }

    /// The notes under a new key's table: the key alone on a line, and why to copy it now.
    static func oneTimeKeyNotes(_ key: String) -> [String] {
        ["", "key: \(key)", "store it now: it is not shown again."]
    }
}

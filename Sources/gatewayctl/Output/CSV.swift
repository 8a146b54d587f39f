import Foundation

/// `-o csv`: a table's header and rows as RFC 4180 comma-separated values, for spreadsheets and
/// Python's `csv` module.
enum CSV {
    /// The lines, each ending in CRLF as RFC 4180 has it. Header names are the table's columns
    /// as field names (`REFUSED AUTH` → `refused_auth`).
    static func rendered(_ table: Table, headers: Bool = true) -> String {
        let header = table.columns.map { $0.lowercased().replacingOccurrences(of: " ", with: "_") }
        let lines = (headers ? [header] : []) + table.rows
        return lines.map { $0.map(field).joined(separator: ",") + "\r\n" }.joined()
    }

    /// A field, quoted when it holds a comma, quote or line break (quotes doubled).
    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A plain text table: a header row and left-aligned columns two spaces apart, like
/// `kubectl get` or `docker ps`, so it reads in a terminal and still greps and `cut`s.
struct Table: Equatable {
    let columns: [String]
    let rows: [[String]]

    /// Every cell is kept escaped (``escaped(_:)``): what a table prints came from the
    /// gateway, and must not be able to move the cursor or reverse the text around it.
    init(columns: [String], rows: [[String]]) {
        self.columns = columns.map(Self.escaped)
        self.rows = rows.map { $0.map(Self.escaped) }
    }

    /// `text` with each control character (C0, DEL, C1), line or paragraph separator and
    /// bidi mark, embedding, override or isolate written as `\u{XXXX}`; all else as it is.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isUnsafe(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// The table as lines joined by newlines, without a trailing newline. No line ends in
    /// spaces: the last column is not padded. Without `headers` only the rows are printed
    /// (still aligned as if the header were there, so output does not shift between modes).
    func rendered(headers: Bool = true) -> String {
        let lines = [columns] + rows
        let count = lines.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: count)
        for line in lines {
            for (index, cell) in line.enumerated() {
                widths[index] = max(widths[index], cell.count)
            }
        }
        return lines.dropFirst(headers ? 0 : 1).map { line in
            line.enumerated().map { index, cell in
                index == line.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count + 2)
            }.joined()
        }.joined(separator: "\n")
    }
}

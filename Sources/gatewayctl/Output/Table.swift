/// A plain text table: a header row and left-aligned columns two spaces apart, like
/// `kubectl get` or `docker ps`, so it reads in a terminal and still greps and `cut`s.
struct Table: Equatable {
    let columns: [String]
    let rows: [[String]]

    init(columns: [String], rows: [[String]]) {
        self.columns = columns
        self.rows = rows
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

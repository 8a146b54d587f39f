import Foundation

/// `--json`: exactly one document on stdout, keys sorted so the output diffs cleanly between
/// runs. `null` fields stay in (the models encode their optionals explicitly).
enum JSONOutput {
    static func document(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func print(_ value: some Encodable) throws {
        Swift.print(try document(value))
    }
}

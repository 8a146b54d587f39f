import Foundation

/// stderr, for the one error line; stdout stays clean for the table or JSON document.
enum StandardError {
    static func writeLine(_ line: String) {
        write(line + "\n")
    }

    /// Without a newline: a prompt that the response follows on the same line.
    static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

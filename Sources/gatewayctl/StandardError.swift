import Foundation

/// stderr, for the one error line; stdout stays clean for the table or JSON document.
enum StandardError {
    static func writeLine(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

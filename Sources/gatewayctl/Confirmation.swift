import Foundation

/// Asks before a command that cannot be undone. On a terminal the question goes to stderr
/// and the answer comes from stdin; a script (no terminal) must say `--yes` up front, since
/// nobody is there to answer and guessing either way would be wrong.
enum Confirmation {
    /// Returns when `yes` was given or the person at the terminal answered y/yes; otherwise
    /// throws ``CtlError/notConfirmed(_:)``.
    static func require(_ question: String, yes: Bool) throws {
        if yes { return }
        guard isatty(STDIN_FILENO) == 1, isatty(STDERR_FILENO) == 1 else {
            throw CtlError.notConfirmed("not on a terminal, so nobody can confirm: pass --yes to \(question.prefix { $0 != "?" }.lowercased())")
        }
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard answer == "y" || answer == "yes" else { throw CtlError.notConfirmed("cancelled: nothing was changed") }
    }
}

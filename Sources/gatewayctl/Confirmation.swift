import ArgumentParser
import Foundation

/// `--yes` and `--dry-run` for commands that change something people cannot take back
/// (`keys revoke`, `partners disable`, `sessions revoke`).
///
/// The convention, as `gh` and `terraform` have it:
/// - `--dry-run` shows what the command would act on and changes nothing (exit 0);
/// - on a terminal, the command asks `[y/N]` on stderr first and acts only on `y` or `yes`;
///   anything else cancels (exit 4, nothing changed);
/// - without a terminal on stdin (scripts, CI), it refuses unless `--yes` says the caller
///   has decided (exit 64): a script never hangs on a question nobody will answer;
/// - `--yes` acts at once.
///
/// A command includes it with `@OptionGroup var confirmation: Confirmation`, fetches and
/// shows the target for `--dry-run` through ``preview(_:printer:)``, then calls
/// ``confirm(_:)`` before the change.
struct Confirmation: ParsableArguments {
    @Flag(name: [.customShort("y"), .long], help: "Act without asking (required when stdin is not a terminal).")
    var yes = false

    @Flag(name: .customLong("dry-run"), help: "Show what would change, and change nothing.")
    var dryRun = false

    func validate() throws {
        if yes && dryRun { throw ValidationError("--yes and --dry-run contradict each other") }
    }

    /// For `--dry-run`: prints `target` and says nothing was changed; true when the command
    /// must stop here.
    func preview<Target: Encodable & TableRepresentable>(_ target: Target, action: String, printer: Printer) throws -> Bool {
        guard dryRun else { return false }
        try printer.show(target)
        printer.note("dry run: would \(action); nothing was changed")
        return true
    }

    /// Returns when the action may go ahead; throws ``CtlError/cancelled`` or a usage error
    /// otherwise. `question` names what will happen, e.g. "Revoke key key_1 (pgk_live_AbCd…)?".
    func confirm(_ question: String, terminal: Bool = isatty(STDIN_FILENO) == 1, readResponse: () -> String? = { readLine() }) throws {
        if yes { return }
        guard terminal else {
            throw CtlError.usage("\(question) Refusing without confirmation: stdin is not a terminal; pass --yes")
        }
        StandardError.write("\(question) [y/N] ")
        let answer = readResponse()?.trimmingCharacters(in: .whitespaces).lowercased()
        guard answer == "y" || answer == "yes" else { throw CtlError.cancelled }
    }
}

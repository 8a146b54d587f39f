import ArgumentParser
import Foundation

/// `gatewayctl`: the admin CLI. Each command parses its arguments, asks ``AdminClient`` for
/// one admin API call and prints the response; everything that can fail ends in ``CtlError``,
/// whose exit code tells scripts *why* it failed.
@main
struct Gatewayctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatewayctl",
        abstract: "Manage the partner gateway: partners, API keys, partners' portal members, users and their sessions, admin credentials and the audit trail, by command or as code.",
        discussion: """
            gatewayctl talks to the gateway's admin API. Point it at the gateway with \
            --admin-url, GATEWAY_ADMIN_URL or a profile (default http://127.0.0.1:9090), and \
            give your personal admin credential ('gatewayctl admins create') in a file: \
            --admin-token-file, GATEWAY_ADMIN_TOKEN_FILE or a profile's token_file \
            (GATEWAY_ADMIN_TOKEN and --admin-token work too, but a token on the command line \
            shows in process lists). The audit trail records the credential behind each call.

            Profiles live in $XDG_CONFIG_HOME/gatewayctl/config.yaml (else \
            ~/.config/gatewayctl/config.yaml), each a url and a token_file; choose one with \
            --profile NAME or default_profile.

            Every command prints a table (--no-headers leaves out its header row), or with \
            -o json or -o yaml (--json is -o json) exactly one document with the admin API's \
            field names. Lists come a page at a time: --limit, then --after the cursor printed \
            on stderr (next_cursor in documents). Changes that cannot be undone ask for \
            confirmation on a terminal; scripts pass --yes, --dry-run previews them. Requests \
            time out after 10 seconds. Shell completion: gatewayctl --generate-completion-script \
            bash (or zsh, fish).

            Exit status:
              0   success
              1   the gateway refused the request (the API's error code is shown)
              2   cannot reach the gateway (connection refused, timeout)
              3   the admin credential is missing, wrong, revoked or expired
              4   a confirmation was declined; nothing was changed
              64  usage error (unknown option, malformed value such as a duration, a bad \
            profile file, a change without --yes when stdin is not a terminal, a state \
            file with a problem)
            'gatewayctl diff' exits 0 when nothing would change, 1 when something would, \
            2 on any error.
            """,
        version: BuildInfo.description,
        subcommands: [
            Partners.self, Keys.self, Members.self, Users.self, Sessions.self, Audit.self, Admins.self, Usage.self, Export.self, Diff.self,
            Apply.self, Version.self,
        ]
    )

    /// Declared here too so that the options may come before the subcommand
    /// (`gatewayctl -o json partners list`); subcommands reuse the parsed values (option
    /// groups are shared by type).
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var display: OutputOptions

    /// Replaces ArgumentParser's `main()` so that every failure is one line on stderr with the
    /// exit code documented above: scripts and log collectors see `error: ...`, never the
    /// multi-line usage dump.
    static func main() async {
        do {
            var command = try await asyncParseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(reporting: error)
        }
    }

    /// Prints `error` as one line and exits; help and version requests still go to stdout
    /// in full.
    static func exit(reporting error: any Error) -> Never {
        if let failure = error as? CtlError {
            StandardError.writeLine(failure.description)
            Foundation.exit(failure.exitCode)
        }
        let code = exitCode(for: error)
        if code == .success || error is ExitCode {
            exit(withError: error)
        }
        let hint = helpHint(for: error)
        StandardError.writeLine("error: " + CtlError.oneLine(message(for: error)) + hint)
        // `diff` exits 0, 1 (drift) or 2 for any error, a command line it cannot parse too.
        Foundation.exit(hint.contains("'gatewayctl diff ") ? Diff.errorExitCode : code.rawValue)
    }

    /// ` (see 'gatewayctl keys rotate --help')`, taken from the usage text ArgumentParser
    /// would have printed, so the hint names the subcommand that was being parsed.
    private static func helpHint(for error: any Error) -> String {
        let full = fullMessage(for: error, columns: 1000)
        guard let line = full.split(separator: "\n").last(where: { $0.contains("See '") }),
              let start = line.range(of: "See '")?.upperBound,
              let end = line[start...].firstIndex(of: "'")
        else { return "" }
        return " (see '\(line[start..<end])')"
    }
}

import ArgumentParser
import Foundation

/// `gatewayctl`: the admin CLI. Each command parses its arguments, asks ``AdminClient`` for
/// one admin API call and prints the answer; everything that can fail ends in ``CtlError``,
/// whose exit code tells scripts *why* it failed.
@main
struct Gatewayctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatewayctl",
        abstract: "Manage the partner gateway: partners, API keys, user sessions and the audit log.",
        discussion: """
            gatewayctl talks to the gateway's admin API. Point it at the gateway with \
            --admin-url or GATEWAY_ADMIN_URL (default http://127.0.0.1:9090) and authenticate \
            with --admin-token or GATEWAY_ADMIN_TOKEN (prefer the variable: options show up \
            in shell history and process lists).

            Every command prints a table, or with --json exactly one JSON document with the \
            admin API's field names. Requests time out after 10 seconds.

            Exit status:
              0   success
              1   the gateway refused the request (the API's error code is shown)
              2   cannot reach the gateway (connection refused, timeout)
              3   the admin token is missing or wrong
              64  usage error (unknown option, malformed value such as a duration)
            """,
        // The gateway's release (PartnerGateway --version); both change together.
        version: "1.0.0",
        subcommands: [Partners.self, Keys.self, Sessions.self, Audit.self]
    )

    /// Declared here too so that the options may come before the subcommand
    /// (`gatewayctl --json partners list`); subcommands reuse the parsed values.
    @OptionGroup var global: GlobalOptions

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
        StandardError.writeLine("error: " + CtlError.oneLine(message(for: error)) + helpHint(for: error))
        Foundation.exit(code.rawValue)
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

import ArgumentParser

/// `-o`, `--json` and `--no-headers` as parsed: every command shares them with the root
/// command, which reads them wherever they stand (`gatewayctl -o json partners list`), so
/// `-o` is text here. ``GlobalOptions`` makes it a format; `export` a file.
struct OutputOptions: ParsableArguments {
    @Option(name: [.customShort("o"), .customLong("output")], help: ArgumentHelp("Output format: table, json, yaml or csv (default: table); for export, a file.", valueName: "format"))
    var text: String?

    @Flag(help: "The same as -o json.")
    var json = false

    @Flag(name: .customLong("no-headers"), help: "Leave out the table's header row.")
    var noHeaders = false
}

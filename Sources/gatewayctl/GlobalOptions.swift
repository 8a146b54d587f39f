import ArgumentParser

/// The options every command takes: where the admin API is and the credential
/// (``ConnectionOptions``), and how the answer is printed (``OutputOptions``).
struct GlobalOptions: ParsableArguments {
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var display: OutputOptions

    /// `-o`: table, json, yaml or csv.
    var output: OutputFormat? { display.text.flatMap(OutputFormat.init(rawValue:)) }
    var json: Bool { display.json }

    func validate() throws {
        if let text = display.text, OutputFormat(rawValue: text) == nil {
            throw ValidationError("The value '\(text)' is invalid for '-o <format>'. Please provide one of 'table', 'json', 'yaml' or 'csv'.")
        }
        if json, let output, output != .json {
            throw ValidationError("--json and -o \(output.rawValue) contradict each other")
        }
    }

    func client() throws -> AdminClient {
        try connection.client()
    }

    var printer: Printer { Printer(format: json ? .json : output ?? .table, headers: !display.noHeaders) }
}

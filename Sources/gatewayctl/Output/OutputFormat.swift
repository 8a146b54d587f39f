import ArgumentParser

/// `-o table|json|yaml|csv`: a table for people; one JSON or YAML document, with the admin
/// API's field names, for scripts; the table's rows as CSV for spreadsheets.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, yaml, csv
}

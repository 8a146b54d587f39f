import ArgumentParser

/// `-o table|json|yaml`: a table for people; one JSON or YAML document, with the admin API's
/// field names, for scripts.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, yaml
}

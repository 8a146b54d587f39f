import ArgumentParser

/// One `--meta NAME=VALUE`. The value may contain `=`; the name is what comes before the
/// first one. The gateway checks names and values; this only splits them.
struct MetaEntry: Equatable {
    let name: String
    let value: String

    init(parsing text: String) throws(InvalidMetaEntry) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { throw InvalidMetaEntry() }
        name = String(text[..<equals])
        value = String(text[text.index(after: equals)...])
    }

    /// The entries as the API's `meta` object; a name given twice is a usage error.
    static func dictionary(_ entries: [MetaEntry]) throws -> [String: String] {
        var meta: [String: String] = [:]
        for entry in entries {
            guard meta.updateValue(entry.value, forKey: entry.name) == nil else {
                throw ValidationError("--meta \(entry.name) is given more than once")
            }
        }
        return meta
    }
}

struct InvalidMetaEntry: Error, CustomStringConvertible {
    var description: String { "expected NAME=VALUE, such as team=payments" }
}

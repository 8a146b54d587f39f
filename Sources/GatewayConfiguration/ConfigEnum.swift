/// An enumeration in the config file: an unknown value names the ones that are allowed.
package protocol ConfigEnum: RawRepresentable<String>, CaseIterable, Decodable {}

extension ConfigEnum {
    package init(from decoder: any Decoder) throws {
        let raw = (try? decoder.singleValueContainer().decode(String.self)) ?? ""
        guard let value = Self(rawValue: raw) else {
            let allowed = Self.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigError(path: decoder.codingPath, "\"\(raw)\" is not one of: \(allowed)")
        }
        self = value
    }
}

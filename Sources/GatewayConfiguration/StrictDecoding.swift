/// Decoding helpers that make every configuration section strict: a key the section does not
/// know stops start-up (a typo must never silently fall back to a default), and every key it
/// does know is optional, keeping the value the section was initialised with.
package struct AnyConfigKey: CodingKey {
    package var stringValue: String
    package var intValue: Int?
    package init(stringValue: String) { self.stringValue = stringValue }
    package init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

extension Decoder {
    /// A keyed container that has already refused every key not in `Keys`.
    package func strictContainer<Keys: CodingKey & CaseIterable>(keyedBy _: Keys.Type) throws -> KeyedDecodingContainer<Keys> {
        let everything = try container(keyedBy: AnyConfigKey.self)
        let known = Set(Keys.allCases.map(\.stringValue))
        for key in everything.allKeys where !known.contains(key.stringValue) {
            let problem = ConfigError(path: codingPath + [key], "unknown key")
            guard let collector = ConfigProblems.current else { throw problem }
            collector.add(problem)
        }
        return try container(keyedBy: Keys.self)
    }
}

extension KeyedDecodingContainer {
    /// The value at `key`, or `fallback` when the key is absent. A value that cannot be
    /// decoded is thrown, or recorded in ``ConfigProblems/current`` (then `fallback` stands in
    /// for it, so the rest of the file is still read).
    package func value<T: Decodable>(_ key: Key, or fallback: T) throws -> T {
        do {
            return try decodeIfPresent(T.self, forKey: key) ?? fallback
        } catch {
            guard let collector = ConfigProblems.current else { throw error }
            collector.add(ConfigError.from(error))
            return fallback
        }
    }
}

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

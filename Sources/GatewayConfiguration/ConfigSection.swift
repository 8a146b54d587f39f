/// A section of the configuration file, each of its keys declared once as a ``ConfigKey``
/// property: its name in the file and its default,
/// `@Key("pool_size") package var poolSize = 16`.
///
/// Decoding is strict: a key the section does not declare stops start-up (a typo must never
/// silently fall back to a default), and a key left out keeps its default. With a
/// ``ConfigProblems`` collector installed, an unknown key or a bad value is recorded instead
/// and the rest of the file is still read.
package protocol ConfigSection: Decodable {
    /// The section with every key at its default.
    init()
}

extension ConfigSection {
    /// A key of this section.
    package typealias Key<Value: Decodable> = ConfigKey<Self, Value>

    package init(from decoder: any Decoder) throws {
        try self.init(keysFrom: decoder)
    }

    /// The section from the mapping `decoder` holds: ``init()`` runs with the mapping at hand,
    /// so each key's initialiser reads its own value (``ConfigReading``).
    package init(keysFrom decoder: any Decoder) throws {
        let reading = ConfigReading(Self.self, keys: try decoder.container(keyedBy: AnyConfigKey.self))
        self = ConfigReading.$current.withValue(reading) { Self() }
        try reading.finish(at: decoder.codingPath)
    }
}

/// One section being decoded (``ConfigSection/init(keysFrom:)``), for its keys' initialisers
/// (``ConfigKey``): the mapping the file gives it, the names its keys declare, and the
/// failure that stops it.
///
/// It travels as a task-local, like ``ConfigProblems``: a property wrapper's initialiser has
/// no other way to reach the decoder.
package final class ConfigReading: @unchecked Sendable {
    // Unchecked: made, used and dropped by one synchronous decode, on one thread.
    @TaskLocal package static var current: ConfigReading?

    /// The section type whose keys this reads.
    let section: ObjectIdentifier
    private let keys: KeyedDecodingContainer<AnyConfigKey>
    private var declared: Set<String> = []
    /// The first value that fails the section: a required key missing or bad, or any bad
    /// value without a collector. Nothing more of the section is read after it, as after a
    /// thrown error.
    private var failure: (any Error)?

    init<Section: ConfigSection>(_: Section.Type, keys: KeyedDecodingContainer<AnyConfigKey>) {
        section = ObjectIdentifier(Section.self)
        self.keys = keys
    }

    /// The value of key `name`, or `fallback` when an optional key is absent (or `null`) or
    /// its value is bad and recorded.
    func value<Value>(
        _ name: String, required: Bool, fallback: () -> Value, read: (KeyedDecodingContainer<AnyConfigKey>, AnyConfigKey) throws -> Value
    ) -> Value {
        declared.insert(name)
        guard failure == nil else { return fallback() }
        let key = AnyConfigKey(stringValue: name)
        do {
            if !required, try !keys.contains(key) || keys.decodeNil(forKey: key) { return fallback() }
            return try read(keys, key)
        } catch {
            if !required, let collector = ConfigProblems.current {
                collector.add(ConfigError.from(error))
            } else {
                failure = error
            }
            return fallback()
        }
    }

    /// Refuses (or records) every key of the mapping that the section did not declare, then
    /// throws the section's failure, if any.
    func finish(at codingPath: [any CodingKey]) throws {
        for key in keys.allKeys where !declared.contains(key.stringValue) {
            let problem = ConfigError(path: codingPath + [key], "unknown key")
            guard let collector = ConfigProblems.current else { throw problem }
            collector.add(problem)
        }
        if let failure { throw failure }
    }
}

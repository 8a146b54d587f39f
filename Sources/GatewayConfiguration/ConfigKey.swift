/// One key of a ``ConfigSection`` (written `@Key` inside one): its name in the file, its
/// default (the property's initial value), whether the file must give it, and how its value
/// is read when its type's `Decodable` is not the whole story.
///
/// Its initialiser does the decoding: while the section is being decoded it takes the key's
/// value from ``ConfigReading/current``, otherwise the default. `Section` ties it to its own
/// section, so a section built as another's default never reads that one's keys.
@propertyWrapper
package struct ConfigKey<Section: ConfigSection, Value: Decodable> {
    package enum Presence: Sendable {
        /// Left out, the key keeps its default.
        case optional
        /// Left out, the section fails with "is required"; the default never survives decoding.
        case required
    }

    package typealias Read = (_ keys: KeyedDecodingContainer<AnyConfigKey>, _ key: AnyConfigKey) throws -> Value

    package var wrappedValue: Value

    package init(
        wrappedValue fallback: @autoclosure () -> Value, _ name: String, _ presence: Presence = .optional,
        read: Read = { keys, key in try keys.decode(Value.self, forKey: key) }
    ) {
        if let reading = ConfigReading.current, reading.section == ObjectIdentifier(Section.self) {
            wrappedValue = reading.value(name, required: presence == .required, fallback: fallback, read: read)
        } else {
            wrappedValue = fallback()
        }
    }
}

extension ConfigKey: Sendable where Value: Sendable {}
extension ConfigKey: Equatable where Value: Equatable {}
extension ConfigKey: Hashable where Value: Hashable {}

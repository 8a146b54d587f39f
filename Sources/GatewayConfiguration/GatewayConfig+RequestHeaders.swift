import GatewayPrimitives

extension GatewayConfig.Route {
    /// `request_headers` (an extension of the schema): fields a route sets on, and drops from,
    /// every request it forwards, applied after the gateway's own header rules and before its
    /// identity fields. Never a field of the gateway's (``HeaderName/gatewayRule(for:)``):
    /// those are refused here, at load.
    package struct RequestHeaders: Sendable, Hashable, ConfigSection {
        /// One field of `add`: `name: value`. Decodable as ``ConfigKey`` wants its values to
        /// be; `add` itself is read as one mapping (``readFields(_:_:)``).
        package struct Field: Sendable, Hashable, Decodable {
            package let name: String
            package let value: String

            package init(name: String, value: String) {
                self.name = name
                self.value = value
            }
        }

        /// Set on the forwarded request, replacing any field of the name the client sent; in
        /// the file's order.
        @Key("add", read: RequestHeaders.readFields) package var add: [Field] = []
        /// Dropped from the client's request before it is forwarded.
        @Key("remove") package var remove: [String] = []

        package init() {}

        /// `add` as written: a mapping of names to values, kept in the file's order.
        static func readFields(_ keys: KeyedDecodingContainer<AnyConfigKey>, _ key: AnyConfigKey) throws -> [Field] {
            let mapping: KeyedDecodingContainer<AnyConfigKey>
            do {
                mapping = try keys.nestedContainer(keyedBy: AnyConfigKey.self, forKey: key)
            } catch DecodingError.typeMismatch {
                throw ConfigError(path: keys.codingPath + [key], "expected a mapping of field names to values, such as {X-Tenant: blue}")
            }
            return try mapping.allKeys.map { Field(name: $0.stringValue, value: try mapping.decode(String.self, forKey: $0)) }
        }

        /// What is wrong with these fields, under `key` (`routes[i].request_headers`): a name
        /// that is not a field name or is the gateway's, a value that is not a field value, a
        /// name given twice in `add` or in both lists (names compared in any case).
        package func problems(key: String) -> [ConfigError] {
            var problems: [ConfigError] = []
            var added: [String] = []
            for field in add {
                let fieldKey = "\(key).add[\"\(field.name)\"]"
                if let problem = Self.nameProblem(field.name) {
                    problems.append(ConfigError(key: fieldKey, problem))
                    continue
                }
                if added.contains(field.name.lowercased()) {
                    problems.append(ConfigError(key: fieldKey, "\"\(field.name)\" is named twice (names are compared in any case)"))
                }
                added.append(field.name.lowercased())
                if !Self.isFieldValue(field.value) {
                    problems.append(ConfigError(key: fieldKey, "is not a field value: no CR, LF, NUL or other control character but tab"))
                }
            }
            for (position, name) in remove.enumerated() {
                let nameKey = "\(key).remove[\(position)]"
                if let problem = Self.nameProblem(name) {
                    problems.append(ConfigError(key: nameKey, problem))
                } else if added.contains(name.lowercased()) {
                    problems.append(ConfigError(key: nameKey, "\"\(name)\" is also in add, whose field already replaces the client's"))
                }
            }
            return problems
        }

        /// Why a route may not add or remove `name`, or nil when it may.
        private static func nameProblem(_ name: String) -> String? {
            guard isToken(name) else { return "\"\(name)\" is not a field name: letters, digits and !#$%&'*+-.^_`|~ only" }
            guard let rule = HeaderName.gatewayRule(for: name) else { return nil }
            return "\"\(name)\" is \(rule): a route may not add or remove it"
        }

        /// Whether `name` is a token (RFC 9110 §5.1): what a field name may be.
        private static func isToken(_ name: String) -> Bool {
            !name.isEmpty && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
                default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
        }

        /// Whether `value` may be written as a field's value (RFC 9110 §5.5): no control
        /// character but horizontal tab, so no CR, LF or NUL to end the field or the head.
        private static func isFieldValue(_ value: String) -> Bool {
            value.utf8.allSatisfy { $0 == UInt8(ascii: "\t") || ($0 >= 0x20 && $0 != 0x7F) }
        }
    }
}

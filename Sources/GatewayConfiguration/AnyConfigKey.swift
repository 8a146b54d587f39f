/// Any key of a mapping in the configuration file: how a section sees every key the file
/// gives it, the ones it does not declare included.
package struct AnyConfigKey: CodingKey {
    package var stringValue: String
    package var intValue: Int?
    package init(stringValue: String) { self.stringValue = stringValue }
    package init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

import Foundation
import GatewayContract
import Yams

/// A command's answer as one document: JSON with sorted keys, indented, so it diffs cleanly
/// between runs; or the same in YAML. Absent values stay in as `null` (the contract's types
/// encode their optionals explicitly).
enum Document {
    static func json(_ value: some Encodable) throws -> String {
        let encoder = AdminJSON.encoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// YAML from the JSON document, so both formats hold exactly the same values (times as
    /// the API wrote them, never re-formatted by a YAML library).
    static func yaml(_ value: some Encodable) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(try json(value).utf8), options: [.fragmentsAllowed])
        return try Yams.serialize(node: node(object), sortKeys: true)
    }

    private static func node(_ object: Any) -> Node {
        switch object {
        case let dictionary as [String: Any]:
            return .mapping(.init(dictionary.sorted { $0.key < $1.key }.map { (Node($0.key), node($0.value)) }))
        case let array as [Any]:
            return .sequence(.init(array.map(node)))
        case let string as String:
            // Quoted when plain YAML would read it as something else (`null`, `true`,
            // `50`, a timestamp), so the document holds the API's string.
            let plain = Node(string)
            return Resolver.default.resolveTag(of: plain) == .str ? plain : Node(string, Tag(.str), .doubleQuoted)
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" { return Node(number.boolValue ? "true" : "false", Tag(.bool)) }
            return Node(number.stringValue, Tag(number.stringValue.contains(".") ? .float : .int))
        default:
            return Node("null", Tag(.null))
        }
    }
}

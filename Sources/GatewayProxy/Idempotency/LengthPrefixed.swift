/// Parts joined as `<length>:<part>` each, so that no two lists of parts run together alike
/// (`"ab", "c"` and `"a", "bc"` differ): the message a record's name and a request's
/// fingerprint are made from, hashed in one update.
enum LengthPrefixed {
    static func message(_ parts: [String]) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(parts.reduce(4 * parts.count) { $0 + $1.utf8.count })
        for part in parts {
            message.append(contentsOf: "\(part.utf8.count):".utf8)
            message.append(contentsOf: part.utf8)
        }
        return message
    }
}

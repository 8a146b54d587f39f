/// Parts joined as `<length>:<part>` each, so that no two lists of parts run together alike
/// (`"ab", "c"` and `"a", "bc"` differ): the message a record's name and a request's
/// fingerprint are made from, hashed in one update. Built in temporary (stack) memory: both
/// are made on every keyed request.
enum LengthPrefixed {
    static func withMessage<Result>(_ parts: [String], _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        let size = parts.reduce(0) { $0 + String($1.utf8.count).utf8.count + 1 + $1.utf8.count }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { buffer in
            var index = 0
            for part in parts {
                for byte in String(part.utf8.count).utf8 {
                    buffer[index] = byte
                    index += 1
                }
                buffer[index] = UInt8(ascii: ":")
                index += 1
                for byte in part.utf8 {
                    buffer[index] = byte
                    index += 1
                }
            }
            return body(UnsafeRawBufferPointer(buffer))
        }
    }
}

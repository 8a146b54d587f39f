// libFuzzer target: the partner API-key parser (KeyRegistry/APIKey.swift). Compiled into the
// KeyRegistry module by Fuzz/build.sh, so it reaches internal API too.
//
// The input is tried as a key as it is, and also turned into a well-formed key (its bytes
// mapped onto the base62 secret, the checksum computed) so the accepting path is fuzzed too:
// that one must parse, and every key that parses must be canonical and re-parse to itself.
private let base62 = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

@_cdecl("LLVMFuzzerTestOneInput")
public func apiKeyFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    check(String(decoding: bytes, as: UTF8.self))
    if size >= 43 {
        var secret = Array(APIKey.prefix.utf8)
        secret += bytes.prefix(43).map { base62[Int($0) % base62.count] }
        let made = APIKey(secret + Array("_".utf8) + APIKey.checksumForFuzzing(secret))
        precondition(made != nil, "a well-formed key with its checksum did not parse")
    }
    return 0
}

private func check(_ text: String) {
    guard let key = APIKey(text) else { return }
    precondition(key.text == text)
    precondition(APIKey(key.text) == key)
    precondition(key.text.hasPrefix(APIKey.prefix) && key.text.utf8.count == APIKey.length)
    _ = key.hash
    _ = key.displayPrefix
}

extension APIKey {
    init?(_ bytes: [UInt8]) {
        self.init(String(decoding: bytes, as: UTF8.self))
    }
}

extension APIKey {
    /// The checksum as docs/admin-api.md and APIKey.swift describe it (CRC-32 of everything before the
    /// last `_`, written as 6 base62 digits), re-implemented here so the two are checked
    /// against each other.
    static func checksumForFuzzing(_ bytes: [UInt8]) -> [UInt8] {
        var value = CRC32.checksum(bytes)
        var digits = [UInt8](repeating: base62[0], count: 6)
        for index in stride(from: 5, through: 0, by: -1) {
            digits[index] = base62[Int(value % 62)]
            value /= 62
        }
        return digits
    }
}

/// Which of Redis Cluster's 16384 slots a key belongs to: CRC16 (XMODEM) of the key, or of
/// its hash tag (the text between the first `{` and the next `}`, when not empty), mod 16384.
///
/// The gateway's keys all carry a tag (`pg:user:{usr}:sessions`), so one entity's keys share
/// a slot; the rule is the one Redis applies (`CLUSTER KEYSLOT`), tested against its responses.
public enum RedisHashSlot {
    public static let count = 16384

    public static func of(_ key: String) -> Int {
        var key = key
        return key.withUTF8 { of(bytes: $0) }
    }

    public static func of(_ key: [UInt8]) -> Int {
        key.withUnsafeBufferPointer { of(bytes: $0) }
    }

    /// Read in place: a script call's key is hashed once per call, with no copy of it.
    private static func of(bytes key: UnsafeBufferPointer<UInt8>) -> Int {
        Int(crc16(hashed(key)) & 0x3FFF)
    }

    /// The slot of the keys `command` declares (the first decides; Redis refuses commands
    /// whose keys span slots), or nil for a command without keys (`PING`, `INFO`, `WAIT`).
    static func of(_ command: RedisCommand) -> Int? {
        command.keys.first.map { of($0) }
    }

    private static func hashed(_ key: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>> {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")),
              let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")),
              close > open + 1
        else { return key[...] }
        return key[(open + 1)..<close]
    }

    private static func crc16(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ table[Int((crc >> 8) ^ UInt16(byte))]
        }
        return crc
    }

    /// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), one entry per byte value.
    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }
}

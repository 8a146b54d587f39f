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

    private static func crc16(_ bytes: some Sequence<UInt8>, from start: UInt16 = 0) -> UInt16 {
        var crc = start
        for byte in bytes {
            crc = crc16(crc, adding: byte)
        }
        return crc
    }

    @inline(__always)
    private static func crc16(_ crc: UInt16, adding byte: UInt8) -> UInt16 {
        (crc << 8) ^ table[Int((crc >> 8) ^ UInt16(byte))]
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

extension RedisHashSlot {
    /// The number of hex digits ``randomTag(prefix:randomDigits:inSlot:)`` chooses: four
    /// reach only 13,152 of the slots, five reach all of them.
    public static let placementDigits = 5

    /// A hash tag that lands in `slot`: `prefix`, `randomDigits` random lowercase hex digits,
    /// then ``placementDigits`` hex digits chosen for the slot. Keys of two entities share a
    /// slot (and one script may write both on a cluster) when one's id is drawn like this in
    /// the other's slot.
    ///
    /// CRC16 from zero is linear over GF(2), so the random part's share of the checksum is
    /// computed once and the ending that cancels it into `slot` is looked up, not searched.
    public static func randomTag(prefix: String = "", randomDigits: Int, inSlot slot: Int) -> String {
        precondition((0..<count).contains(slot), "slot \(slot) is outside 0..<\(count)")
        var tag = Array(prefix.utf8)
        tag.reserveCapacity(tag.count + randomDigits + placementDigits)
        // The kernel's CSPRNG, 16 digits a draw: ids must be unguessable, never seeded.
        var generator = SystemRandomNumberGenerator()
        var random: UInt64 = 0
        for index in 0..<randomDigits {
            if index % 16 == 0 { random = generator.next() }
            tag.append(hexDigits[Int(random & 0xF)])
            random >>= 4
        }
        // crc(head ‖ ending) = crc(head ‖ zeros) ^ crc(ending), the zeros as long as the ending.
        let headShare = crc16(repeatElement(0, count: placementDigits), from: crc16(tag))
        tag.append(contentsOf: digits(of: placementEndings[Int(headShare & 0x3FFF) ^ slot]))
        return String(decoding: tag, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The ``placementDigits`` hex digits of an ending, first digit highest.
    private static func digits(of ending: UInt32) -> some Sequence<UInt8> {
        stride(from: 4 * (placementDigits - 1), through: 0, by: -4).lazy.map { hexDigits[Int((ending >> UInt32($0)) & 0xF)] }
    }

    /// Builds the table ``randomTag(prefix:randomDigits:inSlot:)`` reads, if not built yet:
    /// called at start-up (``SessionStore``), so that the first login does not build it on an
    /// event loop (about 30 ms of a release build's loop, half a second of a debug build's).
    public static func preparePlacement() {
        _ = placementEndings
    }

    /// For each slot value v, ``placementDigits`` hex digits (as nibbles, first digit highest)
    /// whose CRC16 lands in v: the first found counting up, so the table is the same on every
    /// gateway. The digits' checksum is stepped by hand: 314,737 endings are tried.
    private static let placementEndings: [UInt32] = {
        var endings = [UInt32](repeating: .max, count: count)
        var missing = count
        for value in 0..<(UInt32(1) << (4 * placementDigits)) {
            var crc: UInt16 = 0
            for shift in stride(from: 4 * (placementDigits - 1), through: 0, by: -4) {
                crc = crc16(crc, adding: hexDigits[Int((value >> UInt32(shift)) & 0xF)])
            }
            let slot = Int(crc & 0x3FFF)
            if endings[slot] == .max {
                endings[slot] = value
                missing -= 1
                if missing == 0 { break }
            }
        }
        precondition(missing == 0, "\(placementDigits) hex digits do not reach every slot")
        return endings
    }()
}

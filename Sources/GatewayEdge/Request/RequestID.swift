import GatewayObservability
import GatewayPrimitives
import HTTPTypes
import NIOPosix
import Synchronization

/// Request ids: the one every response carries in `X-Request-Id`, made here for the gateway's
/// own endpoints, the proxy engine and the edge's error responses alike.
///
/// A client's id is kept only when it is sane (1 to 128 characters of `A-Z a-z 0-9 - _ . :`),
/// so it cannot smuggle log injections or huge values into upstreams and logs.
package enum RequestID {
    package static func isSane(_ id: String) -> Bool {
        let utf8 = id.utf8
        guard (1...128).contains(utf8.count) else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                 UInt8(ascii: "."), UInt8(ascii: ":"):
                true
            default:
                false
            }
        }
    }

    /// 32 hex characters, unique: a random 64-bit prefix per process, then a counter passed
    /// through a bijective mix so ids do not read as a sequence.
    ///
    /// Request ids must be unique, not secret, so no request pays for random bits (128 from
    /// the system's generator are two `getrandom` system calls).
    ///
    /// Each thread takes counts from the shared counter a block at a time, so that the event
    /// loops do not pass one word between cores on every request.
    package static func generate() -> String {
        let block = countBlocks.currentValue(madeBy: CountBlock.init)
        if block.next == block.end {
            block.next = counter.add(CountBlock.size, ordering: .relaxed).oldValue
            block.end = block.next + CountBlock.size
        }
        let count = block.next
        block.next += 1
        return Hex.encode(prefix, mix(count ^ mixKey))
    }

    /// The counts one thread has taken and not used yet. Only that thread reads or writes it
    /// (``countBlocks``).
    private final class CountBlock: @unchecked Sendable {
        package static let size: UInt64 = 1024
        package var next: UInt64 = 0
        package var end: UInt64 = 0
    }

    private static let countBlocks = ThreadSpecificVariable<CountBlock>()

    private static let prefix: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()

    private static let mixKey: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()

    private static let counter = Atomic<UInt64>(0)

    /// SplitMix64's finaliser: a bijection on 64 bits, so distinct counts stay distinct.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension HTTPField.Name {
    package static let xRequestID = HTTPField.Name(HeaderName.requestID.name)!
}

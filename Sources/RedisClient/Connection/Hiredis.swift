internal import CHiredis
import NIOCore

/// Every call into hiredis goes through this file, and every status it returns through
/// ``Hiredis/check(_:_:error:)``: one place to read for memory ownership and error handling.
enum Hiredis {
    /// Turns a hiredis status into a thrown ``RedisError`` carrying hiredis's own message.
    static func check(
        _ status: Int32,
        _ call: StaticString,
        error message: @autoclosure () -> String
    ) throws(RedisError) {
        guard status == REDIS_OK else {
            throw .protocolViolation("\(call): \(message())")
        }
    }

    /// Converts one reply tree into a ``RedisValue``; the caller frees the tree.
    static func value(of reply: UnsafePointer<redisReply>) -> RedisValue {
        let node = reply.pointee
        // The reply's bytes, copied once (into the array or the string) straight from hiredis.
        let bytes = node.len > 0 ? UnsafeRawBufferPointer(start: node.str, count: node.len) : UnsafeRawBufferPointer(start: nil, count: 0)
        switch node.type {
        case REDIS_REPLY_STRING:
            return .bulkString(Array(bytes))
        case REDIS_REPLY_STATUS:
            return .simpleString(String(decoding: bytes, as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes, as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(node.integer)
        case REDIS_REPLY_ARRAY:
            var elements: [RedisValue] = []
            elements.reserveCapacity(node.elements)
            for index in 0..<node.elements {
                if let child = node.element[index] {
                    elements.append(value(of: child))
                } else {
                    elements.append(.null)
                }
            }
            return .array(elements)
        default:
            return .null
        }
    }
}

/// hiredis's incremental RESP parser (`redisReader`), fed with whatever bytes arrive.
///
/// Not `Sendable`: it lives inside one ``RedisChannelHandler`` and is used only on that
/// channel's event loop.
final class HiredisReplyReader {
    private let reader: UnsafeMutablePointer<redisReader>

    init() {
        // redisReaderCreate only fails when malloc does; there is nothing to recover then.
        guard let reader = redisReaderCreate() else { fatalError("hiredis: out of memory") }
        self.reader = reader
    }

    deinit {
        redisReaderFree(reader)
    }

    func feed(_ bytes: UnsafeRawBufferPointer) throws(RedisError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        try Hiredis.check(
            redisReaderFeed(reader, base.assumingMemoryBound(to: CChar.self), bytes.count),
            "redisReaderFeed",
            error: String(cString: chiredis_reader_errstr(reader))
        )
    }

    /// The next complete reply, or nil when more bytes are needed.
    func next() throws(RedisError) -> RedisValue? {
        var reply: UnsafeMutableRawPointer? = nil
        try Hiredis.check(
            redisReaderGetReply(reader, &reply),
            "redisReaderGetReply",
            error: String(cString: chiredis_reader_errstr(reader))
        )
        guard let reply else { return nil }
        defer { freeReplyObject(reply) }
        return Hiredis.value(of: reply.assumingMemoryBound(to: redisReply.self))
    }
}

extension Array where Element == [UInt8] {
    /// Lends hiredis an `argv`/`argvlen` pair over these byte strings.
    func withCStringArrays<R>(
        _ body: (UnsafeMutableBufferPointer<UnsafePointer<CChar>?>, UnsafeBufferPointer<Int>) -> R
    ) -> R {
        let joined = self.flatMap { $0 }
        let lengths = self.map(\.count)
        return joined.withUnsafeBufferPointer { bytes in
            let base = UnsafeRawPointer(bytes.baseAddress)
            var offset = 0
            var pointers: [UnsafePointer<CChar>?] = []
            pointers.reserveCapacity(lengths.count)
            for length in lengths {
                pointers.append(base.map { ($0 + offset).assumingMemoryBound(to: CChar.self) })
                offset += length
            }
            return pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { argvlen in body(argv, argvlen) }
            }
        }
    }
}

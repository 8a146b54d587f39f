import NIOCore
@testable import RedisClient
import Testing

/// Commands as RESP bytes, written by the client itself (hiredis only parses replies).
@Suite struct RedisCommandEncodingTests {
    private func encoded(_ command: RedisCommand) -> String {
        var buffer = ByteBuffer()
        command.encode(into: &buffer)
        return String(decoding: buffer.readableBytesView, as: UTF8.self)
    }

    @Test func anArrayOfBulkStrings() {
        #expect(encoded(RedisCommand("GET", keys: ["k"])) == "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
        #expect(encoded(.asking) == "*1\r\n$6\r\nASKING\r\n")
    }

    /// Lengths of ten and more take several digits; an empty argument is `$0`.
    @Test func multiDigitLengthsAndEmptyArguments() {
        let long = String(repeating: "v", count: 1234)
        let command = RedisCommand("SET", keys: ["key"], arguments: [long, ""] + (0..<8).map(String.init))
        let text = encoded(command)
        #expect(text.hasPrefix("*12\r\n$3\r\nSET\r\n$3\r\nkey\r\n$1234\r\n" + long + "\r\n$0\r\n\r\n$1\r\n0\r\n"))
        #expect(text.hasSuffix("$1\r\n7\r\n"))
        for length in [9, 10, 99, 100, 1000, 65536] {
            #expect(encoded(RedisCommand(bytes: [Array(repeating: 120, count: length)])).hasPrefix("*1\r\n$\(length)\r\nxxx"))
        }
    }

    /// Bulk strings are binary safe: a value holding CR, LF and NUL is sent as it is.
    @Test func binaryValuesAsTheyAre() {
        let value: [UInt8] = [0x0D, 0x0A, 0x00, 0xFF]
        var buffer = ByteBuffer()
        RedisCommand(bytes: [Array("SET".utf8), Array("k".utf8), value], keys: ["k"]).encode(into: &buffer)
        #expect(Array(buffer.readableBytesView) == Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\n".utf8) + value + Array("\r\n".utf8))
    }

    /// A command keeps only its encoding; its arguments and name read back from it.
    @Test func argumentsAndNameReadBack() {
        let command = RedisCommand("get", keys: ["key"], arguments: ["", "12345678901"])
        #expect(command.arguments == [Array("get".utf8), Array("key".utf8), [], Array("12345678901".utf8)])
        #expect(command.name == "GET")
        #expect(RedisCommand(bytes: [Array("SET".utf8), [0x0D, 0x0A]]).arguments == [Array("SET".utf8), [0x0D, 0x0A]])
    }

    /// A prepared script call's `EVAL` (sent once Redis lost the script) is `EVAL`'s own
    /// encoding, before and after its last argument is replaced.
    @Test func aScriptCallsEvalIsEvalsEncoding() throws {
        let script = RedisScript(name: "s", source: "return KEYS[1]", waitsForReplicas: false)
        let keys = ["{k}a", "{k}b"]
        let call = try RedisScriptCall(script, keys: keys, bytes: [[0x0D, 0x0A, 0x00], Array("12345678901".utf8)])
        #expect(call.eval == RedisCommand.eval(script, keys: keys, bytes: [[0x0D, 0x0A, 0x00], Array("12345678901".utf8)]).encoded)
        #expect(call.arguments == [[0x0D, 0x0A, 0x00], Array("12345678901".utf8)])
        let replaced = call.replacingLastArgument(with: "7")
        #expect(replaced.eval == RedisCommand.eval(script, keys: keys, bytes: [[0x0D, 0x0A, 0x00], Array("7".utf8)]).encoded)
        #expect(replaced.evalSHA == RedisCommand.evalsha(script, keys: keys, bytes: [[0x0D, 0x0A, 0x00], Array("7".utf8)]).encoded)
    }
}

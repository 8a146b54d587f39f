import NIOCore

/// Where a field lies in a head kept as bytes (``UpstreamResponseHead``, ``ClientRequestHead``):
/// its line from `start` to `end` (after its CRLF), its name up to `nameEnd` (the colon), its
/// value (without the white space around it) from `valueStart` to `valueEnd`. Offsets from the
/// head's first byte; a head is far shorter than 4 GiB.
struct HTTP1FieldLine: Equatable {
    let start: UInt32
    let nameEnd: UInt32
    let valueStart: UInt32
    let valueEnd: UInt32
    let end: UInt32

    init(start: Int, name: Range<Int>, value: Range<Int>, end: Int) {
        self.start = UInt32(start)
        nameEnd = UInt32(name.upperBound)
        valueStart = UInt32(value.lowerBound)
        valueEnd = UInt32(value.upperBound)
        self.end = UInt32(end)
    }

    /// Writes a field line at `bytes`' end, `name`, ": ", `value` and a CRLF, each part written
    /// by its closure; where it lies returned. The one layout of a line the gateway writes
    /// itself (a head laid out from fields it holds).
    static func write(
        into bytes: inout ByteBuffer, name: (inout ByteBuffer) -> Void, value: (inout ByteBuffer) -> Void
    ) -> HTTP1FieldLine {
        let start = bytes.writerIndex
        name(&bytes)
        let nameEnd = bytes.writerIndex
        bytes.writeStaticString(": ")
        value(&bytes)
        let valueEnd = bytes.writerIndex
        bytes.writeStaticString("\r\n")
        return HTTP1FieldLine(start: start, name: start..<nameEnd, value: (nameEnd + 2)..<valueEnd, end: bytes.writerIndex)
    }

    /// This line's field in `head`, the bytes of the head it was read from.
    func field(in head: UnsafeRawBufferPointer) -> HTTP1Field {
        HTTP1Field(
            name: UnsafeRawBufferPointer(rebasing: head[Int(start)..<Int(nameEnd)]),
            value: UnsafeRawBufferPointer(rebasing: head[Int(valueStart)..<Int(valueEnd)]),
            line: UnsafeRawBufferPointer(rebasing: head[Int(start)..<Int(end)])
        )
    }
}

/// One field of a head kept as bytes: its name, its value (without the white space around it)
/// and its whole line (`name: value` and the CRLF, as the peer wrote it), bytes of the head.
package struct HTTP1Field {
    package let name: UnsafeRawBufferPointer
    package let value: UnsafeRawBufferPointer
    package let line: UnsafeRawBufferPointer

    /// The value as a `String`, made now.
    package var valueString: String { String(decoding: value, as: UTF8.self) }
}

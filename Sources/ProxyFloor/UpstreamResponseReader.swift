import NIOCore
import NIOHPACK

/// Reads whole HTTP/1.1 responses from an upstream connection's bytes: each head found by
/// offsets (``MessageFraming/scanHead(_:)``: its length and `Content-Length`) and its fields
/// copied once, straight from the bytes, into the HTTP/2 header block (`:status`, names
/// lower-cased, HTTP/1's connection fields left out); the body a slice of the read buffer.
struct UpstreamResponseReader {
    private var buffer: ByteBuffer?

    /// Adds what one read brought and hands on each response it completed; false when the
    /// bytes are not a response the floor understands.
    mutating func read(_ bytes: ByteBuffer, complete: (FloorResponse) -> Void) -> Bool {
        if buffer == nil { buffer = bytes } else { var more = bytes; buffer!.writeBuffer(&more) }
        while var pending = buffer, pending.readableBytes > 0 {
            switch pending.withUnsafeReadableBytes({ MessageFraming.scanHead($0) }) {
            case .incomplete:
                return true
            case .invalid:
                return false
            case .head(let headLength, let contentLength):
                guard pending.readableBytes >= headLength + contentLength else { return true }
                let block = pending.withUnsafeReadableBytes { Self.headerBlock(UnsafeRawBufferPointer(rebasing: $0[..<headLength])) }
                guard let block else { return false }
                pending.moveReaderIndex(forwardBy: headLength)
                let body = pending.readSlice(length: contentLength)!
                buffer = pending.readableBytes > 0 ? pending : nil
                complete(FloorResponse(headers: block, body: body))
            }
        }
        return true
    }

    /// HTTP/1's connection-specific fields, which HTTP/2 forbids (RFC 9113, 8.2.2).
    private static let dropped = ["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"].map { Array($0.utf8) }

    /// The header block of a whole head (status line, fields, blank line).
    private static func headerBlock(_ head: UnsafeRawBufferPointer) -> HPACKHeaders? {
        // "HTTP/1.1 200 ..."
        guard head.count >= 12, head[8] == UInt8(ascii: " "),
              head[9...11].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        var block = HPACKHeaders()
        block.reserveCapacity(8)
        block.add(name: ":status", value: String(decoding: UnsafeRawBufferPointer(rebasing: head[9..<12]), as: UTF8.self))
        var lineStart = head.firstIndex(of: 0x0A)! + 1
        while let newline = head[lineStart...].firstIndex(of: 0x0A) {
            defer { lineStart = newline + 1 }
            var lineEnd = newline
            if lineEnd > lineStart, head[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            if lineEnd == lineStart { break }
            guard let colon = head[lineStart..<lineEnd].firstIndex(of: UInt8(ascii: ":")), colon > lineStart else { return nil }
            if dropped.contains(where: { $0.count == colon - lineStart && MessageFraming.matches($0, head, at: lineStart, end: colon) }) {
                continue
            }
            var valueStart = colon + 1, valueEnd = lineEnd
            while valueStart < valueEnd, head[valueStart] == UInt8(ascii: " ") || head[valueStart] == UInt8(ascii: "\t") { valueStart += 1 }
            while valueEnd > valueStart, head[valueEnd - 1] == UInt8(ascii: " ") || head[valueEnd - 1] == UInt8(ascii: "\t") { valueEnd -= 1 }
            let name = String(unsafeUninitializedCapacity: colon - lineStart) { name in
                for offset in 0..<name.count { name[offset] = asciiLowercased(head[lineStart + offset]) }
                return name.count
            }
            block.add(name: name, value: String(decoding: UnsafeRawBufferPointer(rebasing: head[valueStart..<valueEnd]), as: UTF8.self))
        }
        return block
    }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}

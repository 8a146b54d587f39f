#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Reads whole HTTP/1.1 responses from an upstream connection's bytes: the head parsed into
/// a status and fields (strings: HPACK needs them), the body gathered by `Content-Length`.
struct UpstreamResponseReader {
    private var buffer: ByteBuffer?

    /// Adds what one read brought; returns each response it completed.
    mutating func read(_ bytes: ByteBuffer, complete: (FloorResponse) -> Void) -> Bool {
        if buffer == nil { buffer = bytes } else { var more = bytes; buffer!.writeBuffer(&more) }
        while var pending = buffer, pending.readableBytes > 0 {
            guard let headLength = pending.withUnsafeReadableBytes({ Self.headLength($0) }) else { return true }
            guard var response = Self.parseHead(pending.getSlice(at: pending.readerIndex, length: headLength)!) else { return false }
            let length = response.fields.first { $0.0 == "content-length" }.flatMap { Int($0.1) } ?? 0
            guard pending.readableBytes >= headLength + length else { return true }
            pending.moveReaderIndex(forwardBy: headLength)
            response.body = pending.readSlice(length: length)!
            buffer = pending.readableBytes > 0 ? pending : nil
            complete(response)
        }
        return true
    }

    private static func headLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count where bytes[index] == 0x0A && bytes[index - 1] == 0x0D && bytes[index - 2] == 0x0A {
            return index + 1
        }
        return nil
    }

    private static let dropped: Set<String> = ["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]

    private static func parseHead(_ head: ByteBuffer) -> FloorResponse? {
        let lines = String(buffer: head).split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.count >= 12,
              let status = Int(statusLine.dropFirst(9).prefix(3)) else { return nil }
        var fields: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon].lowercased()
            if dropped.contains(name) { continue }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            fields.append((name, String(value.reversed().drop { $0 == " " || $0 == "\t" }.reversed())))
        }
        return FloorResponse(status: status, fields: fields, body: ByteBuffer())
    }
}

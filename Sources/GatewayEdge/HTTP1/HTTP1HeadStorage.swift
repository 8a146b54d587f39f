import NIOCore
import NIOHTTP1

/// What a head kept as bytes says besides where its fields lie, its bytes among it.
protocol HTTP1HeadSummary {
    /// The head as it came (or as the gateway laid it out), through the blank line.
    var bytes: ByteBuffer { get }
}

/// A head kept as bytes (``UpstreamResponseHead``, ``ClientRequestHead``) in one allocation:
/// what it says and where each of its fields lies in its bytes. One reference: a part that holds
/// the head goes through the pipeline (`NIOAny`) without a box of its own, and is copied with one
/// retain. Written once, as the head is made, and only read after.
struct HTTP1HeadStorage<Summary: HTTP1HeadSummary> {
    private let buffer: ManagedBuffer<(summary: Summary, count: Int), HTTP1FieldLine>

    init(_ summary: Summary, lines: UnsafeBufferPointer<HTTP1FieldLine>) {
        buffer = ManagedBuffer.create(minimumCapacity: lines.count) { _ in (summary, lines.count) }
        buffer.withUnsafeMutablePointerToElements { elements in
            _ = UnsafeMutableBufferPointer(start: elements, count: lines.count).initialize(from: lines)
        }
    }

    var summary: Summary { buffer.header.summary }
    /// The number of fields.
    var count: Int { buffer.header.count }

    /// Hands `visit` each field in order, its bytes valid during the call.
    func forEachField(_ visit: (HTTP1Field) throws -> Void) rethrows {
        try buffer.withUnsafeMutablePointers { header, lines in
            try header.pointee.summary.bytes.withUnsafeReadableBytes { head in
                for index in 0..<header.pointee.count { try visit(lines[index].field(in: head)) }
            }
        }
    }

    /// `read` of the first field `matches` takes, its bytes valid during the call; nil when none does.
    func first<Result>(where matches: (HTTP1Field) -> Bool, _ read: (HTTP1Field) -> Result) -> Result? {
        buffer.withUnsafeMutablePointers { header, lines in
            header.pointee.summary.bytes.withUnsafeReadableBytes { head in
                for index in 0..<header.pointee.count {
                    let field = lines[index].field(in: head)
                    if matches(field) { return read(field) }
                }
                return nil
            }
        }
    }

    /// The same fields, where they lie, under another summary of the same bytes.
    func with(_ summary: Summary) -> Self {
        buffer.withUnsafeMutablePointerToElements { lines in Self(summary, lines: UnsafeBufferPointer(start: lines, count: count)) }
    }

    /// Whether `other`'s fields lie where these do.
    func hasLines(of other: Self) -> Bool {
        count == other.count && buffer.withUnsafeMutablePointerToElements { left in
            other.buffer.withUnsafeMutablePointerToElements { right in (0..<count).allSatisfy { left[$0] == right[$0] } }
        }
    }

    /// The fields as NIO's `HTTPHeaders`, a `String` per name and value made now.
    var headers: HTTPHeaders {
        var fields: [(String, String)] = []
        fields.reserveCapacity(count)
        forEachField { field in
            fields.append((String(decoding: field.name, as: UTF8.self), field.valueString))
        }
        return HTTPHeaders(fields)
    }

    /// Writes `fields` after `bytes`' start line as field lines (`name: value` and a CRLF), then
    /// the blank line; where each lies returned. The fields are taken as they are: their
    /// protocol's parser read them.
    static func layOut(_ fields: some Sequence<(String, String)>, after bytes: inout ByteBuffer) -> [HTTP1FieldLine] {
        var lines: [HTTP1FieldLine] = []
        for (name, value) in fields {
            lines.append(HTTP1FieldLine.write(into: &bytes, name: { $0.writeString(name) }, value: { $0.writeString(value) }))
        }
        bytes.writeStaticString("\r\n")
        return lines
    }
}

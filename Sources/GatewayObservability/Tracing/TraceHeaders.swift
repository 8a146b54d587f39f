import GatewayPrimitives
import HTTPTypes
import NIOHTTP1
import Tracing

/// The caller's W3C trace context fields, and nothing else of the request: what the tracer
/// reads (and, should it fail, prints) can never hold a token or key.
///
/// A `traceparent` that is not `VERSION-TRACEID-PARENTID-FLAGS` in lowercase hex (2-32-16-2
/// digits) is dropped here, as W3C Trace Context says to: the request starts a new trace,
/// quietly (a client's malformed header is not the operator's problem).
package struct TraceHeaders: Sendable, CustomStringConvertible {
    package let traceparent: String?
    package let tracestate: String?

    package init(traceparent: String?, tracestate: String?) {
        self.traceparent = traceparent.flatMap { Self.isWellFormed($0) ? $0 : nil }
        self.tracestate = self.traceparent == nil ? nil : tracestate
    }

    package init(_ headers: HTTPHeaders) {
        self.init(traceparent: headers.first(name: HeaderName.traceparent.name), tracestate: headers.first(name: HeaderName.tracestate.name))
    }

    package init(_ fields: HTTPFields) {
        self.init(traceparent: fields[Self.traceparentName], tracestate: fields[Self.tracestateName])
    }

    package var description: String { "traceparent=\(traceparent ?? "-")" }

    private static let traceparentName = HTTPField.Name(HeaderName.traceparent.name)!
    private static let tracestateName = HTTPField.Name(HeaderName.tracestate.name)!

    /// Whether a well-formed `traceparent`'s flags have the sampled bit.
    package static func isSampled(_ traceparent: String) -> Bool {
        let flags = traceparent.utf8.dropFirst(53).prefix(2)
        guard let value = UInt8(String(decoding: flags, as: UTF8.self), radix: 16) else { return false }
        return value & 1 == 1
    }

    /// The trace id (32 hex digits) of a well-formed `traceparent`.
    package static func traceID(of traceparent: String) -> String {
        String(decoding: traceparent.utf8.dropFirst(3).prefix(32), as: UTF8.self)
    }

    /// A new trace that is not recorded: random trace and parent ids (``TraceRandom``), flags
    /// `00`, so the upstream can still correlate its own logs by trace id. Written straight
    /// into the string: it is made for every request that is not recorded.
    package static func unsampledTraceparent(using random: inout TraceRandom) -> String {
        // Neither id may be all zeros.
        let traceHigh = UInt64.random(in: 1...UInt64.max, using: &random)
        let traceLow = random.next()
        let parent = UInt64.random(in: 1...UInt64.max, using: &random)
        let zero = UInt8(ascii: "0"), dash = UInt8(ascii: "-")
        // 00-<trace id: 32>-<parent id: 16>-00
        return String(unsafeUninitializedCapacity: 55) { buffer in
            buffer[0] = zero; buffer[1] = zero; buffer[2] = dash
            Hex.write(traceHigh, into: buffer, at: 3)
            Hex.write(traceLow, into: buffer, at: 19)
            buffer[35] = dash
            Hex.write(parent, into: buffer, at: 36)
            buffer[52] = dash; buffer[53] = zero; buffer[54] = zero
            return 55
        }
    }

    /// The shape only; the tracer checks the rest (an all-zero id, version `ff`).
    private static func isWellFormed(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        // Version 00 is exactly 55 bytes; later versions may append `-` and more fields.
        guard bytes.count == 55 || (bytes.count > 55 && bytes[55] == UInt8(ascii: "-")) else { return false }
        for (index, byte) in bytes.prefix(55).enumerated() {
            switch index {
            case 2, 35, 52:
                guard byte == UInt8(ascii: "-") else { return false }
            default:
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte) else { return false }
            }
        }
        return true
    }

    package struct Reader: Extractor {
        package func extract(key: String, from carrier: TraceHeaders) -> String? {
            switch key {
            case HeaderName.traceparent.lowercase: carrier.traceparent
            case HeaderName.tracestate.lowercase: carrier.tracestate
            default: nil
            }
        }
    }
}

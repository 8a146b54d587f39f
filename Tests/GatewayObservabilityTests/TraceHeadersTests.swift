import NIOHTTP1
@testable import GatewayObservability
import Testing

/// What the tracer is given of a request: only a well-formed W3C `traceparent` (and then its
/// `tracestate`); anything else starts a new trace.
@Suite struct TraceHeadersTests {
    private let valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func aWellFormedTraceparentAndItsStateAreKept() {
        let headers = TraceHeaders(HTTPHeaders([("traceparent", valid), ("tracestate", "a=1"), ("authorization", "Bearer secret")]))
        #expect(headers.traceparent == valid)
        #expect(headers.tracestate == "a=1")
        #expect(!headers.description.contains("secret"))
        // A later version may append fields after a dash.
        #expect(TraceHeaders(traceparent: "01" + valid.dropFirst(2) + "-extra", tracestate: nil).traceparent != nil)
    }

    @Test(arguments: [
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",  // uppercase
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",  // short
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011",  // long, no dash
        "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",  // separators
        "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",  // not hex
        "", "garbage",
    ])
    func aMalformedTraceparentIsDroppedWithItsState(_ value: String) {
        let headers = TraceHeaders(traceparent: value, tracestate: "a=1")
        #expect(headers.traceparent == nil)
        #expect(headers.tracestate == nil)
    }

    /// Head sampling reads the caller's flags; a request not recorded gets a new unsampled
    /// context of the right shape, with a fresh trace id each time.
    @Test func sampledFlagTraceIDAndNewUnsampledContexts() {
        #expect(TraceHeaders.isSampled(valid))
        #expect(!TraceHeaders.isSampled(String(valid.dropLast(2)) + "00"))
        #expect(TraceHeaders.isSampled(String(valid.dropLast(2)) + "03"))
        #expect(TraceHeaders.traceID(of: valid) == "4bf92f3577b34da6a3ce929d0e0e4736")
        var random = TraceRandom()
        let made = (0..<10_000).map { _ in TraceHeaders.unsampledTraceparent(using: &random) }
        for traceparent in made {
            #expect(TraceHeaders(traceparent: traceparent, tracestate: nil).traceparent == traceparent)
            #expect(traceparent.hasPrefix("00-") && traceparent.hasSuffix("-00") && !TraceHeaders.isSampled(traceparent))
        }
        #expect(Set(made.map(TraceHeaders.traceID(of:))).count == made.count)
        #expect(Set(made.map { $0.dropFirst(36).prefix(16) }).count == made.count)
    }

    /// The ids come from a generator seeded once (``TraceRandom``), not from a system call per
    /// number: its output must still spread over every bit.
    @Test func traceRandomSpreadsOverEveryBit() {
        var random = TraceRandom()
        var ones = [Int](repeating: 0, count: 64)
        let draws = 20_000
        for _ in 0..<draws {
            let value = random.next()
            for bit in 0..<64 where value >> UInt64(bit) & 1 == 1 { ones[bit] += 1 }
        }
        // Each bit is set in half the draws; 45-55% is more than 14 standard deviations wide.
        #expect(ones.allSatisfy { (draws * 45 / 100)...(draws * 55 / 100) ~= $0 })
    }
}

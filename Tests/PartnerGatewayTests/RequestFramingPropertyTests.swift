import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The framing property, against a real gateway and an upstream that records what its parser
/// saw (``RecordingUpstream``): for generated pipelined requests, with and without bodies,
/// sized and chunked, with every hop-by-hop and framing field named in `Connection` in any
/// case and order, the upstream sees exactly the requests the client's framing says, with
/// byte-identical bodies, and never one more. Each body carries a whole request of its own
/// that an upstream would run if the gateway framed the body differently from its client.
///
/// Seeded: `FRAMING_SEED` and `FRAMING_CASES` replay or widen a run; a failure prints both.
@Suite("Proxy: request framing property (processes)", .realProcesses)
struct RequestFramingPropertyTests {
    static let seed = ProcessInfo.processInfo.environment["FRAMING_SEED"].flatMap(UInt64.init) ?? 0x5EED_F4A3
    static let cases = ProcessInfo.processInfo.environment["FRAMING_CASES"].flatMap(Int.init) ?? 3000

    @Test func theUpstreamSeesExactlyTheRequestsTheClientFramed() async throws {
        let stack = try await RecordedGateway(routes: [("open", "/open", "none")])
        defer { stack.stop() }
        let (upstream, gateway) = (stack.upstream, stack.gateway)

        var generator = FramingCaseGenerator(seed: Self.seed)
        let generated = (0..<Self.cases).map { generator.next(index: $0) }
        let outcomes = try await Self.run(generated, port: gateway.port, workers: 4)

        let replay = "seed \(Self.seed), \(Self.cases) cases (FRAMING_SEED, FRAMING_CASES)"
        var forwarded: [String: FramingCase.Request] = [:]
        var refusedCount = 0
        for (framingCase, outcome) in zip(generated, outcomes) {
            // Whether an earlier request on the connection ended it (a refusal, or a request
            // that asks to switch protocols, after which the gateway closes).
            var ended = false
            for (request, status) in zip(framingCase.requests, outcome.statuses.map(Optional.some) + Array(repeating: nil, count: framingCase.requests.count)) {
                let context = "case \(framingCase.index), \(request.id)"
                switch status {
                case _ where ended:
                    #expect(status == nil, "\(context): answered \(status ?? 0) after the connection should have ended\n\(replay)")
                case 200?:
                    #expect(!request.refused, "\(context): forwarded though its framing is ambiguous\n\(request.text)\n\(replay)")
                    forwarded[request.id] = request
                case 400?:
                    #expect(request.refused, "\(context): refused\n\(request.text)\n\(replay)")
                    refusedCount += 1
                case nil:
                    Issue.record("\(context): no answer\n\(framingCase.requests.map(\.text).joined())\nreceived:\n\(outcome.received)\n\(replay)")
                case let other?:
                    Issue.record("\(context): status \(other)\n\(request.text)\n\(replay)")
                }
                ended = ended || request.refused || request.asksUpgrade
            }
            for mismatch in outcome.misdirected {
                Issue.record("case \(framingCase.index): an answer meant for another request: \(mismatch)\n\(replay)")
            }
        }

        let recorded = upstream.requests
        #expect(upstream.parseErrors.isEmpty, "the upstream could not parse what it was sent: \(upstream.parseErrors.prefix(3))")
        #expect(recorded.count == forwarded.count, "the upstream saw \(recorded.count) requests for \(forwarded.count) forwarded\n\(replay)")
        var seen = Set<String>()
        for request in recorded {
            let id = request.values("x-request-id").first ?? "?"
            guard let sent = forwarded[id], seen.insert(id).inserted else {
                Issue.record("the upstream saw a request no client framed: \(request.method) \(request.target) id \(id)\n\(replay)")
                continue
            }
            #expect(request.method == sent.method && request.target == sent.target, "\(id): \(request.method) \(request.target)")
            #expect(request.body == sent.body, "\(id): body of \(request.body.count) bytes for \(sent.body.count) sent\n\(sent.text)\n\(replay)")
            let lengths = request.values("content-length")
            let codings = request.values("transfer-encoding")
            #expect(lengths.count + codings.count <= 1, "\(id): framing fields \(lengths) \(codings)")
            if let length = lengths.first { #expect(Int(length) == sent.body.count, "\(id): Content-Length \(length)") }
            #expect(request.values("x-gateway-user-id").isEmpty, "\(id): a forged identity reached the upstream")
        }
        print("framing property: \(Self.cases) generated connections, \(generated.map(\.requests.count).reduce(0, +)) requests, \(forwarded.count) forwarded byte for byte, \(refusedCount) refused; \(replay)")
        #expect(forwarded.count > Self.cases / 2, "too few forwarded to prove anything: \(forwarded.count)")
        #expect(refusedCount > Self.cases / 20, "too few refused to prove anything: \(refusedCount)")
    }

    /// What a client saw on one connection: the status of each response, in order, and the
    /// answers whose body (the upstream echoes the request id) names another request.
    struct Outcome: Sendable {
        var statuses: [Int] = []
        var misdirected: [String] = []
        /// What came back, for a failure's message.
        var received = ""
    }

    private static func run(_ cases: [FramingCase], port: Int, workers: Int) async throws -> [Outcome] {
        try await withThrowingTaskGroup(of: [(Int, Outcome)].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    try await withCheckedThrowingContinuation { continuation in
                        DispatchQueue.global().async {
                            continuation.resume(with: Result {
                                try stride(from: worker, to: cases.count, by: workers).map { ($0, try exchange(cases[$0], port: port)) }
                            })
                        }
                    }
                }
            }
            var outcomes = Array(repeating: Outcome(), count: cases.count)
            for try await results in group {
                for (index, outcome) in results { outcomes[index] = outcome }
            }
            return outcomes
        }
    }

    /// Sends a case's requests in one write, reads until the gateway closes (the last request
    /// asks it to, and a refusal closes at once), and splits what came back into answers.
    private static func exchange(_ framingCase: FramingCase, port: Int) throws -> Outcome {
        let fd = try RawClient.connectedSocket(port: port, readTimeout: 10)
        defer { close(fd) }
        var wire: [UInt8] = []
        for request in framingCase.requests { wire += request.bytes }
        _ = RawClient.sendAll(fd, String(decoding: wire, as: UTF8.self))
        let received = Array(RawClient.readUntilClosed(fd).text.utf8)
        var outcome = Outcome(received: String(decoding: received.prefix(4000), as: UTF8.self))
        var cursor = received[...]
        while let answer = HTTPResponse(parsing: &cursor) {
            let index = outcome.statuses.count
            outcome.statuses.append(answer.status)
            if answer.status == 200, index < framingCase.requests.count, answer.body != framingCase.requests[index].id {
                outcome.misdirected.append("\(framingCase.requests[index].id) got \(answer.body)")
            }
        }
        return outcome
    }

    /// One answer read off the front of `bytes` (framed by its `Content-Length`).
    private struct HTTPResponse {
        let status: Int
        let body: String

        init?(parsing bytes: inout ArraySlice<UInt8>) {
            let separator = Array("\r\n\r\n".utf8)
            guard let end = bytes.firstRange(of: separator) else { return nil }
            let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
            guard head.hasPrefix("HTTP/1.1 "), let status = Int(head.dropFirst(9).prefix(3)) else { return nil }
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            let bodyStart = end.upperBound
            guard bytes.endIndex - bodyStart >= length else { return nil }
            self.status = status
            body = String(decoding: bytes[bodyStart..<(bodyStart + length)], as: UTF8.self)
            bytes = bytes[(bodyStart + length)...]
        }
    }
}

/// One connection's worth of generated requests.
struct FramingCase {
    struct Request {
        let id: String
        let method: String
        let target: String
        /// What the client writes.
        let bytes: [UInt8]
        /// The body the client's framing delimits: what the upstream must receive.
        let body: [UInt8]
        /// `Connection` names a field that frames or routes the request, or the length is
        /// repeated, or it asks to upgrade (the route takes no WebSockets): the gateway refuses it.
        var refused: Bool { framingRefused || asksUpgrade }
        let framingRefused: Bool
        /// `Connection` names `upgrade` and an `Upgrade` field is there: the gateway refuses it,
        /// then closes the connection.
        let asksUpgrade: Bool

        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    let index: Int
    let requests: [Request]
}

/// Generates ``FramingCase``s from a seed (the same seed, the same cases).
struct FramingCaseGenerator {
    private var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    private mutating func below(_ bound: Int) -> Int { random.below(bound) }
    private mutating func chance(_ percent: Int) -> Bool { random.chance(percent) }
    private mutating func pick<T>(_ items: [T]) -> T { random.pick(items) }

    private mutating func shuffled<T>(_ items: [T]) -> [T] {
        var items = items
        for index in items.indices.reversed() where index > 0 { items.swapAt(index, below(index + 1)) }
        return items
    }

    private mutating func randomCase(_ text: String) -> String {
        String(text.map { chance(50) ? Character($0.uppercased()) : $0 })
    }

    static let hopByHopFields = [
        "Keep-Alive: timeout=5", "TE: trailers", "Trailer: X-Checksum", "Upgrade: websocket", "Proxy-Connection: keep-alive",
        "X-Hop: drop-me",
    ]
    static let connectionTokens = [
        "keep-alive", "te", "trailer", "upgrade", "proxy-connection", "x-hop", "x-request-id", "authorization", "x-custom",
        "content-length", "transfer-encoding", "host",
    ]
    static let protected: Set<String> = ["content-length", "transfer-encoding", "host"]

    mutating func next(index: Int) -> FramingCase {
        let count = 1 + below(3)
        return FramingCase(index: index, requests: (0..<count).map { request(case: index, number: $0, last: $0 == count - 1) })
    }

    private mutating func request(case caseIndex: Int, number: Int, last: Bool) -> FramingCase.Request {
        let id = "c\(caseIndex)-r\(number)"
        let method = pick(["GET", "DELETE", "POST", "PUT", "PATCH", "POST", "PUT"])
        let target = "/open/c\(caseIndex)/r\(number)"
        // 0: no body, 1: Content-Length, 2: chunked. Body-less methods mostly carry none.
        let bodyKind = (method == "GET" || method == "DELETE") && chance(70) ? 0 : below(3)
        var body: [UInt8] = []
        if bodyKind != 0 {
            // A whole request hidden in the body: it runs if the upstream frames the body otherwise.
            if chance(80) {
                body += Array("GET /open/smuggled-\(caseIndex) HTTP/1.1\r\nHost: up\r\nX-Gateway-User-Id: usr_victim\r\nX-Request-Id: smuggled\r\nContent-Length: 0\r\n\r\n".utf8)
            }
            body += (0..<below(200)).map { _ in UInt8(32 + below(95)) }
        }

        var fields = ["Host: gw", "X-Request-Id: \(id)", "X-Custom: \(id)"]
        for field in Self.hopByHopFields where chance(25) { fields.append(field) }
        var tokens = shuffled(Self.connectionTokens).prefix(below(4)).map { randomCase($0) }
        var refused = tokens.contains { Self.protected.contains($0.lowercased()) }
        if last { tokens.append("close") }
        if !tokens.isEmpty {
            if tokens.count > 1 && chance(30) {
                let split = 1 + below(tokens.count - 1)
                fields.append("Connection: " + tokens[..<split].joined(separator: ", "))
                fields.append("Connection: " + tokens[split...].joined(separator: pick([",", ", ", " , "])))
            } else {
                fields.append(pick(["Connection: ", "connection:", "CONNECTION:  "]) + tokens.joined(separator: pick([",", ", ", " , "])))
            }
        }
        var payload: [UInt8] = []
        switch bodyKind {
        case 1:
            fields.append("Content-Length: \(body.count)")
            // NIO's parser refuses a repeated length, equal or not.
            if chance(15) {
                fields.append("Content-Length: \(body.count)")
                refused = true
            }
            payload = body
        case 2:
            fields.append(pick(["Transfer-Encoding: chunked", "transfer-encoding: Chunked"]))
            var rest = body[...]
            while !rest.isEmpty {
                let size = min(rest.count, 1 + below(64))
                let hex = String(size, radix: 16, uppercase: chance(50))
                payload += Array((hex + (chance(10) ? ";ext=1" : "") + "\r\n").utf8) + rest.prefix(size) + Array("\r\n".utf8)
                rest = rest.dropFirst(size)
            }
            payload += Array((chance(20) ? "0\r\nX-Checksum: abc\r\n\r\n" : "0\r\n\r\n").utf8)
        default:
            if chance(10) { fields.append("Content-Length: 0") }
        }
        let head = "\(method) \(target) HTTP/1.1\r\n" + shuffled(fields).joined(separator: "\r\n") + "\r\n\r\n"
        return FramingCase.Request(
            id: id, method: method, target: target, bytes: Array(head.utf8) + payload, body: body, framingRefused: refused,
            asksUpgrade: fields.contains("Upgrade: websocket") && tokens.contains { $0.lowercased() == "upgrade" }
        )
    }
}

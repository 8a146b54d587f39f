import Foundation
@testable import GatewayEndpoints
import Testing
import TestSupport

/// `log.format: json` (the default), read back from a real gateway's standard error: every
/// line parses as one JSON object, each kind of event has its fields, and every line about a
/// request carries the request's id.
@Suite("Structured logs", .realProcesses)
struct StructuredLogTests {
    /// The gateway's log as parsed JSON objects; a line that is not one fails the test.
    private func lines(_ gateway: GatewayProcess) throws -> [[String: Any]] {
        try gateway.log.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return try #require(object, "not a JSON object: \(line)")
        }
    }

    private func accessLine(_ gateway: GatewayProcess, requestID: String) throws -> [String: Any]? {
        try lines(gateway).first { $0["logger"] as? String == "access" && $0["request_id"] as? String == requestID }
    }

    @Test func everyKindOfLineIsJSONWithItsFields() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let gateway = try await GatewayProcess(yaml: """
        redis: {url: \(redis.url), timeout: \(GatewayProcess.redisTimeout)}
        otp: {mode: uat}
        routes:
          - {name: echo, path_prefix: /echo, upstream: \(upstream.url), auth: none}
          - {name: user, path_prefix: /user, upstream: \(upstream.url), auth: bearer}
          - {name: dead, path_prefix: /dead, upstream: http://127.0.0.1:\(LoopbackPort.free()), auth: none}
        """)

        // Start-up: plain info lines with the common fields. The listener accepts before the
        // line saying so is written, so it is awaited.
        let isStartLine: ([String: Any]) -> Bool = { ($0["msg"] as? String)?.hasPrefix("Server started") == true }
        try await eventually { try lines(gateway).contains(where: isStartLine) }
        let started = try #require(try lines(gateway).first(where: isStartLine))
        #expect(started["level"] as? String == "info")
        #expect(started["logger"] as? String == "partner-gateway")
        let timestamp = try #require(started["ts"] as? String)
        #expect(timestamp.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(timestamp)")

        // The event-loop fast path (auth: none, no body).
        _ = try await DriverHTTP.call(gateway.baseURL + "/echo/a", headers: [("X-Request-Id", "fast-1")])
        // Through Hummingbird (a body), with the byte counts.
        _ = try await DriverHTTP.call(gateway.baseURL + "/echo/b", method: .POST, headers: [("X-Request-Id", "slow-1")], body: #"{"a":1}"#)
        // One of the gateway's own endpoints: its answer's length, counted without a wrapper.
        let health = try await DriverHTTP.call(gateway.baseURL + "/healthz", headers: [("X-Request-Id", "own-1")])
        // A refused caller, a request no route matches, an unreachable upstream.
        _ = try await DriverHTTP.call(gateway.baseURL + "/user/1", headers: [("X-Request-Id", "refused-1")])
        _ = try await DriverHTTP.call(gateway.baseURL + "/nowhere", headers: [("X-Request-Id", "unmatched-1")])
        _ = try await DriverHTTP.call(gateway.baseURL + "/dead/1", headers: [("X-Request-Id", "dead-1")])
        // A driver's login and a proxied call with their token.
        let pair = try await DriverAPI.login(gateway, phone: "9876543210")
        _ = try await DriverHTTP.call(
            gateway.baseURL + "/user/1", headers: [("X-Request-Id", "user-1"), ("Authorization", "Bearer \(pair.accessToken)")]
        )

        // Access lines reach the log within the flush interval (1 s).
        try await eventually(timeout: .seconds(5)) { try accessLine(gateway, requestID: "user-1") != nil }

        let fast = try #require(try accessLine(gateway, requestID: "fast-1"))
        #expect(fast["msg"] as? String == "request")
        #expect(fast["route"] as? String == "echo")
        #expect(fast["status"] as? Int == 200)
        #expect(fast["auth"] as? String == "none")
        #expect(fast["client"] as? String == "127.0.0.1")
        #expect(fast["upstream_ms"] is Double || fast["upstream_ms"] is Int)
        #expect(fast["duration_ms"] is Double || fast["duration_ms"] is Int)
        #expect((fast["bytes_out"] as? Int ?? 0) > 0)

        let slow = try #require(try accessLine(gateway, requestID: "slow-1"))
        #expect(slow["route"] as? String == "echo")
        #expect(slow["bytes_in"] as? Int == 7)
        #expect((slow["bytes_out"] as? Int ?? 0) > 0)
        #expect(slow["upstream_ms"] != nil)

        let own = try #require(try accessLine(gateway, requestID: "own-1"))
        #expect(own["status"] as? Int == 200)
        #expect(own["bytes_out"] as? Int == health.text.utf8.count, "\(health)")
        #expect(own["duration_ms"] is Double || own["duration_ms"] is Int)

        let refused = try #require(try accessLine(gateway, requestID: "refused-1"))
        #expect(refused["status"] as? Int == 401)
        #expect(refused["auth"] as? String == "MISSING_TOKEN")
        #expect(refused["user_id"] == nil)

        let unmatched = try #require(try accessLine(gateway, requestID: "unmatched-1"))
        #expect(unmatched["route"] as? String == "unmatched")
        #expect(unmatched["status"] as? Int == 404)

        let user = try #require(try accessLine(gateway, requestID: "user-1"))
        #expect(user["auth"] as? String == "ok")
        #expect(user["user_id"] as? String == pair.userID)

        // Lines about a request, other than its access line, carry its id too.
        let unavailable = try #require(try lines(gateway).first { $0["msg"] as? String == "upstream unavailable" })
        #expect(unavailable["level"] as? String == "warning")
        #expect(unavailable["request_id"] as? String == "dead-1")
        #expect(unavailable["route"] as? String == "dead")
        let login = try #require(try lines(gateway).first { $0["msg"] as? String == "otp login" })
        #expect((login["request_id"] as? String)?.isEmpty == false)
        #expect(login["phone"] as? String == "******3210")

        // Nothing routine at warning: after these requests, the only warnings are the
        // ephemeral-key notice and the unreachable upstream.
        let warnings = try lines(gateway).filter { $0["level"] as? String == "warning" }.compactMap { $0["msg"] as? String }
        #expect(warnings.allSatisfy { $0 == "upstream unavailable" || $0.hasPrefix("assertion.signing_keys is empty") }, "\(warnings)")

        // A clean stop adds no warning and writes what the access log still buffered.
        _ = try await DriverHTTP.call(gateway.baseURL + "/echo/last", headers: [("X-Request-Id", "last-1")])
        await gateway.stop()
        #expect(try accessLine(gateway, requestID: "last-1") != nil)
        let warningsAfterStop = try lines(gateway).filter { $0["level"] as? String == "warning" }.count
        #expect(warningsAfterStop == warnings.count, "\(gateway.log)")
    }

    @Test func textFormatIsPlainLines() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let gateway = try await GatewayProcess(yaml: """
        redis: {url: \(redis.url), timeout: \(GatewayProcess.redisTimeout)}
        otp: {mode: uat}
        log: {format: text}
        routes:
          - {name: echo, path_prefix: /echo, upstream: \(upstream.url), auth: none}
        """)
        _ = try await DriverHTTP.call(gateway.baseURL + "/echo/a", headers: [("X-Request-Id", "text-1")])
        // A line logged through Hummingbird's request logger.
        let trigger = try await DriverHTTP.call(
            gateway.baseURL + "/auth/otp/trigger", method: .POST,
            headers: [("X-Request-Id", "text-otp-1"), ("Content-Type", "application/json")], body: #"{"phone": "9876543210"}"#
        )
        #expect(trigger.status == 200)
        await gateway.stop()
        let lines = gateway.log.split(separator: "\n")
        let access = try #require(lines.first { $0.contains("request_id=text-1") })
        #expect(access.contains("route=echo status=200"), "\(access)")
        #expect(!gateway.log.contains("{\"ts\""))
        // One request id per line: the gateway's, not also Hummingbird's internal counter.
        let sent = try #require(lines.first { $0.hasSuffix("otp sent") }, "\(gateway.log)")
        #expect(sent.contains("request_id=text-otp-1"), "\(sent)")
        #expect(!gateway.log.contains("hb.request.id"), "\(gateway.log)")
    }
}

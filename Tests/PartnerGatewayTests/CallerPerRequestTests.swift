import Foundation
import Testing
import TestSupport

/// The engine keeps a connection's last caller and assertion from one request to the next; a
/// keep-alive connection that carries several callers must still name each request's own.
@Suite("Callers on one keep-alive connection", .realProcesses)
struct CallerPerRequestTests {
    @Test func eachRequestReachesTheUpstreamAsItsOwnDriverWithItsOwnAssertion() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream))
        let first = try await DriverAPI.login(gateway, phone: "9876500091")
        let second = try await DriverAPI.login(gateway, phone: "9876500092")
        let callers = [first, second, first, first, second, first]
        let requests = callers.enumerated().map { index, caller in
            "GET /user/\(index) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(caller.accessToken)\r\n\r\n"
        }
        let (answers, stillOpen) = try await RawClient.pipelined(port: gateway.port, requests: requests)
        try #require(answers.count == callers.count, "\(answers)")
        var assertions: [String: Set<String>] = [:]
        for (index, answer) in answers.enumerated() {
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "\(answer)")
            let body = try #require(answer.range(of: "\r\n\r\n").map { answer[$0.upperBound...] })
            let echoed = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            let headers = try #require(echoed["headers"] as? [String: [String]])
            #expect(headers["x-gateway-user-id"] == [callers[index].userID], "request \(index): \(headers)")
            let assertion = try #require(headers["x-gateway-assertion"]?.first, "request \(index): \(headers)")
            assertions[callers[index].userID, default: []].insert(assertion)
        }
        // Each driver's requests carry one assertion, the other driver's another: none was
        // handed on to the next caller.
        #expect(assertions.count == 2)
        #expect(assertions.values.allSatisfy { $0.count == 1 }, "\(assertions)")
        #expect(Set(assertions.values.flatMap { $0 }).count == 2, "\(assertions)")
        #expect(stillOpen)
    }
}

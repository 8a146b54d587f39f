import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import gatewayctl

@Suite struct AdminClientTests {
    @Test func apiErrorsBecomeOneLineWithTheirCode() {
        let body = ByteBuffer(string: #"{"error": {"code": "NOT_FOUND", "message": "no partner ptr_x"}}"#)
        let error = AdminClient.failure(status: .notFound, body: body)
        #expect(error.description == "error: no partner ptr_x (NOT_FOUND)")
        #expect(error.exitCode == 1)
    }

    @Test func conflictsAndOutagesAreRefusals() {
        let conflict = AdminClient.failure(
            status: .conflict,
            body: ByteBuffer(string: #"{"error":{"code":"CONFLICT","message":"key_1 is revoked"}}"#)
        )
        #expect(conflict == CtlError(exitCode: 1, message: "key_1 is revoked (CONFLICT)"))
        let outage = AdminClient.failure(
            status: .serviceUnavailable,
            body: ByteBuffer(string: #"{"error":{"code":"SERVICE_UNAVAILABLE","message":"Redis unreachable"}}"#)
        )
        #expect(outage.description == "error: Redis unreachable (SERVICE_UNAVAILABLE)")
        #expect(outage.exitCode == 1)
    }

    @Test func unauthorizedExitsWithThree() {
        let body = ByteBuffer(string: #"{"error":{"code":"UNAUTHORIZED","message":"wrong admin token"}}"#)
        let error = AdminClient.failure(status: .unauthorized, body: body)
        #expect(error.exitCode == 3)
        #expect(error.description.hasPrefix("error: wrong admin token (UNAUTHORIZED)"))
        #expect(!error.description.contains("\n"))
        #expect(AdminClient.failure(status: .unauthorized, body: ByteBuffer()).exitCode == 3)
    }

    @Test func aBodyWithoutTheErrorShapeFallsBackToTheStatus() {
        let error = AdminClient.failure(status: .badGateway, body: ByteBuffer(string: "<html>\n<h1>502</h1>\n</html>"))
        #expect(error.description == "error: the gateway answered 502 Bad Gateway (HTTP 502)")
        #expect(error.exitCode == 1)
    }

    @Test func multiLineMessagesAreFolded() {
        let body = ByteBuffer(string: #"{"error":{"code":"INVALID_REQUEST","message":"bad\nduration\t 'x'"}}"#)
        #expect(AdminClient.failure(status: .badRequest, body: body).description == "error: bad duration 'x' (INVALID_REQUEST)")
    }

    @Test func unreachableNamesTheURL() {
        let error = CtlError.unreachable("http://127.0.0.1:9090", reason: "connection refused")
        #expect(error.description == "error: cannot reach the gateway at http://127.0.0.1:9090: connection refused")
        #expect(error.exitCode == 2)
        #expect(CtlError.missingToken.exitCode == 3)
    }

    @Test(arguments: [
        ("http://127.0.0.1:9090", "http://127.0.0.1:9090"),
        ("http://127.0.0.1:9090/", "http://127.0.0.1:9090"),
        ("https://admin.example.com/gateway/", "https://admin.example.com/gateway"),
    ])
    func acceptsHTTPBaseURLs(_ text: String, _ base: String) {
        #expect(AdminClient.baseURL(text) == base)
    }

    @Test(arguments: ["127.0.0.1:9090", "ftp://host", "http://", "http://host/?a=b", "not a url", ""])
    func rejectsOtherURLs(_ text: String) {
        #expect(AdminClient.baseURL(text) == nil)
    }

    @Test func idsAreOnePathSegment() {
        #expect(AdminClient.segment("ptr_4f9c") == "ptr_4f9c")
        #expect(AdminClient.segment("../x y") == "..%2Fx%20y")
    }

    @Test func theActorIsUserAtHost() {
        #expect(AdminClient.actor(environment: ["USER": "asha"]).hasPrefix("asha@"))
        #expect(AdminClient.actor(environment: [:]).hasPrefix("unknown@"))
        #expect(!AdminClient.actor(environment: ["USER": "a\nb"]).contains("\n"))
    }

    @Test func transportFailuresAreSummedUpInAFewWords() {
        #expect(AdminClient.reason(for: IOError(errnoCode: ECONNREFUSED, reason: "connect")) == "connection refused")
        #expect(AdminClient.reason(for: HTTPClientError.deadlineExceeded) == "no answer within 10 s")
        #expect(AdminClient.reason(for: HTTPClientError.connectTimeout) == "no connection within 10 s")
        struct Verbose: Error, CustomStringConvertible {
            var description: String { "line one\nline two " + String(repeating: "x", count: 300) }
        }
        let reason = AdminClient.reason(for: Verbose())
        #expect(!reason.contains("\n"))
        #expect(reason.count <= 160)
    }
}

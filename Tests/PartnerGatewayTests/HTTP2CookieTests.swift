import Foundation
import Testing
import TestSupport

/// An HTTP/2 client may send its cookies as several `cookie` fields (RFC 9113 §8.2.3); an
/// HTTP/1.1 upstream must get them as one `Cookie` field, joined with "; ".
@Suite("TLS: HTTP/2 cookie fields reach an HTTP/1.1 upstream as one", .serialized, .realProcesses)
struct HTTP2CookieTests {
    /// Prints each request head it receives (as JSON, one line) and answers it.
    static let recordingUpstream = """
        import json
        def serve(connection):
            for head in request_heads(connection):
                print(json.dumps(head.decode("latin-1")), flush=True)
                connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok")
            connection.close()
        """

    @Test func splitCookieFieldsAreJoinedIntoOne() async throws {
        let stack = try await ScriptedTLSGateway(serving: Self.recordingUpstream)
        defer { stack.upstream.stop() }
        let (upstream, probe) = (stack.upstream, stack.probe)
        let outcome = try await probe.exchange([
            .request("GET", "/open/split", [["cookie", "a=1"], ["x-between", "y"], ["cookie", "b=2"], ["cookie", "c=3"]]),
            .request("POST", "/open/split-with-body", [["cookie", "d=4"], ["cookie", "e=5"], ["content-length", "2"]], body: "{}"),
            .request("GET", "/open/single", [["cookie", "f=6"]]),
        ])
        #expect(outcome.streams.map(\.status) == [200, 200, 200], "\(outcome)")
        let heads = upstream.log.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8), options: .fragmentsAllowed)) as? String
        }
        try #require(heads.count == 3, "\(upstream.log)")
        let expected = ["a=1; b=2; c=3", "d=4; e=5", "f=6"]
        for (head, cookie) in zip(heads, expected) {
            let cookies = head.split(separator: "\r\n").filter { $0.lowercased().hasPrefix("cookie:") }
            #expect(cookies.count == 1, "\(head)")
            #expect(cookies.first.map { $0.dropFirst("cookie:".count).trimmingCharacters(in: .whitespaces) } == cookie, "\(head)")
        }
    }
}

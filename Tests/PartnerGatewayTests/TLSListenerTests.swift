import Foundation
import Testing
import TestSupport

/// HTTPS on the gateway's listeners: curl over HTTP/2 and HTTP/1.1 to every route kind and
/// endpoint, with certificates the test makes, against real gateway, echo and Redis processes.
@Suite("TLS: HTTP/2 and HTTP/1.1 on the public and admin listeners", .serialized, .realProcesses)
struct TLSListenerTests {
    @Test func everyRouteKindAndEndpointAnswersOverHTTP2AndHTTP1() async throws {
        let certificates = try await TestCertificates()
        let server = try await certificates.issue("gateway")
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let tls = "{cert_file: \(server.certFile), key_file: \(server.keyFile), min_version: 1.2}"
        let yaml = DriverYAML.make(redis: redis, extra: """
            tls: \(tls)
            admin:
              tls: \(tls)
            routes:
              - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}
              - {name: user, path_prefix: /user, upstream: \(upstream.url), auth: bearer}
              - {name: reports, path_prefix: /reports, upstream: \(upstream.url), auth: api_key}
            """)
        let gateway = try await GatewayProcess(yaml: yaml)
        let curl = Curl(caFile: certificates.caFile)
        let base = "https://127.0.0.1:\(gateway.port)"
        let admin = "https://127.0.0.1:\(gateway.adminPort)"
        let adminAuth = ["Authorization: Bearer \(GatewayProcess.adminToken)"]

        // The admin listener, over TLS: a partner and its key.
        let partner = try await curl.call(.http2, "POST", admin + "/v1/partners", headers: adminAuth, body: #"{"name": "TLS Partner"}"#)
        #expect(partner.status == 201 || partner.status == 200, "\(partner)")
        #expect(partner.version == "2")
        let partnerID = try #require(partner.json["partner_id"] as? String)
        let created = try await curl.call(.http1, "POST", admin + "/v1/partners/\(partnerID)/keys", headers: adminAuth)
        #expect(created.version == "1.1")
        let key = try #require(created.json["key"] as? String, "\(created)")

        for version in [Curl.Version.http2, .http1] {
            let expected = version == .http2 ? "2" : "1.1"
            let phone = version == .http2 ? "+919800000001" : "+919800000002"
            var answers: [String: Curl.Answer] = [:]
            answers["healthz"] = try await curl.call(version, "GET", base + "/healthz")
            answers["readyz"] = try await curl.call(version, "GET", base + "/readyz")
            answers["jwks"] = try await curl.call(version, "GET", base + "/.well-known/jwks.json")
            answers["trigger"] = try await curl.call(version, "POST", base + "/auth/otp/trigger", body: #"{"phone": "\#(phone)"}"#)
            let login = try await curl.call(version, "POST", base + "/auth/otp/verify", body: #"{"phone": "\#(phone)", "otp": "123456"}"#)
            answers["verify"] = login
            let access = try #require(login.json["access_token"] as? String, "\(login)")
            let refresh = try #require(login.json["refresh_token"] as? String, "\(login)")
            answers["whoami"] = try await curl.call(version, "GET", base + "/partner/v1/whoami", headers: ["X-API-Key: \(key)"])
            answers["sdk-token"] = try await curl.call(
                version, "POST", base + "/partner/v1/sdk-token", headers: ["X-API-Key: \(key)"],
                body: #"{"phone": "\#(phone)", "driver_id": "drv-\#(expected)"}"#
            )
            let open = try await curl.call(version, "GET", base + "/open/none?q=1")
            answers["route auth none"] = open
            let bearer = try await curl.call(version, "GET", base + "/user/profile", headers: ["Authorization: Bearer \(access)"])
            answers["route auth bearer"] = bearer
            answers["route auth bearer, again (cached)"] = try await curl.call(version, "GET", base + "/user/profile", headers: ["Authorization: Bearer \(access)"])
            answers["route auth api_key"] = try await curl.call(version, "POST", base + "/reports/daily", headers: ["X-API-Key: \(key)"], body: "{}")
            let refreshed = try await curl.call(version, "POST", base + "/auth/token/refresh", body: #"{"refresh_token": "\#(refresh)"}"#)
            answers["refresh"] = refreshed
            let newAccess = try #require(refreshed.json["access_token"] as? String, "\(refreshed)")
            answers["logout"] = try await curl.call(version, "POST", base + "/auth/logout", headers: ["Authorization: Bearer \(newAccess)"], body: "{}")
            answers["admin metrics"] = try await curl.call(version, "GET", admin + "/metrics", headers: adminAuth)

            for (name, answer) in answers {
                #expect((200..<300).contains(answer.status), "\(expected) \(name): \(answer)")
                #expect(answer.version == expected, "\(name) went over HTTP/\(answer.version)")
            }
            for answer in [open, bearer] {
                let headers = answer.json["headers"] as? [String: [String]] ?? [:]
                #expect(headers["x-forwarded-proto"] == ["https"], "\(headers)")
            }
            let identity = (bearer.json["headers"] as? [String: [String]])?["x-gateway-user-id"]
            #expect(identity?.count == 1, "\(bearer)")
            // Gateway answers on HTTP/2 are the same JSON error shape.
            let refused = try await curl.call(version, "GET", base + "/user/profile", headers: ["Authorization: Bearer nope"])
            #expect(refused.status == 401)
            #expect((refused.json["error"] as? [String: Any])?["code"] != nil, "\(refused)")
        }
    }

    @Test func anHTTP2StreamUnderWayFinishesWhenTheGatewayShutsDown() async throws {
        let certificates = try await TestCertificates()
        let server = try await certificates.issue("gateway")
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            tls: {cert_file: \(server.certFile), key_file: \(server.keyFile)}
            routes:
              - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}
            """))
        let slow = Task {
            try await Curl(caFile: certificates.caFile).call(.http2, "GET", "https://127.0.0.1:\(gateway.port)/open/slow?delay_ms=1500")
        }
        try await eventually(timeout: .seconds(10)) { upstream.log.contains("received GET /open/slow") }
        gateway.process.signal(SIGTERM)
        let answer = try await slow.value
        #expect(answer.status == 200, "\(answer)")
        #expect(answer.version == "2")
        // The certificate watcher ends with the others: a clean exit, every service drained.
        #expect(try await gateway.process.waitForExit(timeout: .seconds(15)) == 0, "\(gateway.log)")
        #expect(gateway.log.contains(#""msg":"stopped""#), "\(gateway.log)")
    }

    /// An HTTP/2 `:method` HTTP/1.1's parser would refuse is refused too: none names a
    /// metric series (a client could otherwise make one per request).
    @Test func anUnknownHTTP2MethodIsRefusedAndNamesNoMetric() async throws {
        let stack = try await ScriptedTLSGateway(serving: Self.numbersItsConnections, prefix: "/numbered")
        defer { stack.upstream.stop() }
        let outcome = try await stack.probe.exchange([.request("ZZZ-1", "/numbered/1"), .request("ZZZ-2", "/nope"), .request("GET", "/numbered/2")])
        #expect(outcome.streams.count == 3, "\(outcome)")
        #expect(outcome.streams.prefix(2).allSatisfy { $0.reset == HTTP2Probe.protocolError }, "\(outcome)")
        #expect(outcome.streams.last?.status == 200, "\(outcome)")
        let metrics = try await DriverAPI.admin(stack.gateway, .GET, "/metrics")
        #expect(metrics.status == 200 && !metrics.text.contains("ZZZ"), "\(metrics.text.prefix(300))")
    }

    /// An upstream that responses each request with the number of the connection it came on.
    static let numbersItsConnections = """
        import itertools
        numbers = itertools.count(1)
        def serve(connection):
            body = str(next(numbers)).encode()
            for _ in request_heads(connection):
                connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n%s" % (len(body), body))
            connection.close()
        """

    /// A proxied stream's response ends the stream as it is written; that must neither close the
    /// upstream connection (the next stream reuses it) nor lose the stream's access log line.
    @Test func proxiedHTTP2StreamsReuseTheirUpstreamConnectionAndAreLogged() async throws {
        let stack = try await ScriptedTLSGateway(serving: Self.numbersItsConnections, prefix: "/numbered")
        defer { stack.upstream.stop() }
        let (gateway, probe) = (stack.gateway, stack.probe)
        let outcome = try await probe.exchange((1...10).map { .request("GET", "/numbered/\($0)") })
        #expect(outcome.streams.map(\.status) == Array(repeating: 200, count: 10), "\(outcome)")
        #expect(Set(outcome.streams.map(\.body)).count == 1, "a new upstream connection per stream: \(outcome)")
        try await eventually(timeout: .seconds(5)) {
            gateway.log.split(separator: "\n").filter { $0.contains(#""route":"numbered""#) && $0.contains(#""status":200"#) }.count == 10
        }
    }

    /// An upstream that reads each request's body (`Content-Length` or chunked) and answers
    /// with its size on a line, then 2,000,000 bytes.
    static let countsBodiesAndAnswersLarge = """
        def read_exactly(connection, data, size):
            while len(data) < size:
                chunk = connection.recv(65536)
                if not chunk:
                    raise EOFError
                data += chunk
            return data[:size], data[size:]
        def read_line(connection, data):
            while b"\\r\\n" not in data:
                chunk = connection.recv(65536)
                if not chunk:
                    raise EOFError
                data += chunk
            return data.split(b"\\r\\n", 1)
        def serve(connection):
            data = b""
            try:
                while True:
                    while b"\\r\\n\\r\\n" not in data:
                        chunk = connection.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                    head, data = data.split(b"\\r\\n\\r\\n", 1)
                    fields = {line.split(b":", 1)[0].strip().lower(): line.split(b":", 1)[1].strip() for line in head.split(b"\\r\\n")[1:]}
                    received = 0
                    if b"content-length" in fields:
                        body, data = read_exactly(connection, data, int(fields[b"content-length"]))
                        received = len(body)
                    elif fields.get(b"transfer-encoding") == b"chunked":
                        while True:
                            line, data = read_line(connection, data)
                            size = int(line, 16)
                            chunk, data = read_exactly(connection, data, size + 2)
                            received += size
                            if size == 0:
                                break
                    body = b"%d\\n" % received + b"x" * 2000000
                    connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body) + body)
            except EOFError:
                return
        """

    /// A proxied stream's body and answer both larger than any HTTP/2 window on the way: the
    /// request is taken as its window is opened again, the response waits for the client's.
    @Test func largeBodiesPassBothWaysOnAProxiedHTTP2Stream() async throws {
        let stack = try await ScriptedTLSGateway(serving: Self.countsBodiesAndAnswersLarge, prefix: "/bulk", extra: "max_body_bytes: 4000000\n")
        defer { stack.upstream.stop() }
        let (certificates, upstream, gateway) = (stack.certificates, stack.upstream, stack.gateway)
        let upload = certificates.directory + "/upload.bin"
        try Data(repeating: UInt8(ascii: "u"), count: 3_000_000).write(to: URL(fileURLWithPath: upload))
        let curl = Curl(caFile: certificates.caFile)
        let base = "https://127.0.0.1:\(gateway.port)"
        let posted = try await curl.call(.http2, "POST", base + "/bulk/upload", body: "@" + upload)
        #expect(posted.status == 200 && posted.version == "2", "\(posted)")
        #expect(posted.body.hasPrefix("3000000\n"), "\(posted.body.prefix(20))")
        #expect(posted.body.utf8.count == 8 + 2_000_000)
        let fetched = try await curl.call(.http2, "GET", base + "/bulk/download")
        #expect(fetched.body.hasPrefix("0\n") && fetched.body.utf8.count == 2 + 2_000_000, "\(fetched.body.prefix(20))")
        try await eventually(timeout: .seconds(5)) {
            gateway.log.split(separator: "\n").filter { $0.contains(#""route":"bulk""#) && $0.contains(#""status":200"#) }.count == 2
        }
    }

    @Test func plainHTTPStaysAvailableWithoutTLSAndForwardsProtoHTTP() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            routes:
              - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}
            """))
        let answer = try await Curl(caFile: nil).call(.http1, "GET", gateway.baseURL + "/open/x")
        #expect(answer.status == 200)
        #expect((answer.json["headers"] as? [String: [String]])?["x-forwarded-proto"] == ["http"], "\(answer)")
    }

    /// sslyze (PyPI, `scripts/install-deps.sh`) scans every protocol version and cipher suite.
    @Test func sslyzeFindsNoProtocolBelowTLS12NoWeakCipherAndNoRenegotiation() async throws {
        let certificates = try await TestCertificates()
        let server = try await certificates.issue("gateway")
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: "tls: {cert_file: \(server.certFile), key_file: \(server.keyFile)}"))
        let report = certificates.directory + "/sslyze.json"
        let scan = try await ShortCommand.run("/usr/bin/env", [
            "sslyze", "--quiet", "--json_out=\(report)", "--sslv2", "--sslv3", "--tlsv1", "--tlsv1_1", "--tlsv1_2", "--tlsv1_3", "--reneg",
            "127.0.0.1:\(gateway.port)",
        ])
        #expect(scan.status == 0, "sslyze: \(scan.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any]
        let server0 = try #require((json?["server_scan_results"] as? [[String: Any]])?.first)
        let results = try #require(server0["scan_result"] as? [String: Any], "\(server0)")
        func result(_ name: String) -> [String: Any] {
            ((results[name] as? [String: Any])?["result"] as? [String: Any]) ?? [:]
        }
        func accepted(_ name: String) -> [String] {
            (result(name)["accepted_cipher_suites"] as? [[String: Any]] ?? []).compactMap { ($0["cipher_suite"] as? [String: Any])?["name"] as? String }
        }
        for old in ["ssl_2_0_cipher_suites", "ssl_3_0_cipher_suites", "tls_1_0_cipher_suites", "tls_1_1_cipher_suites"] {
            #expect(result(old)["is_tls_version_supported"] as? Bool == false, "\(old): \(accepted(old))")
            #expect(accepted(old).isEmpty, "\(old): \(accepted(old))")
        }
        let tls12 = accepted("tls_1_2_cipher_suites")
        #expect(!tls12.isEmpty)
        for suite in tls12 {
            let forwardSecretAEAD = suite.contains("_ECDHE_") && (suite.contains("_GCM_") || suite.contains("CHACHA20_POLY1305"))
            #expect(forwardSecretAEAD, "weak TLS 1.2 suite accepted: \(suite)")
        }
        #expect(!accepted("tls_1_3_cipher_suites").isEmpty)
        let renegotiation = result("session_renegotiation")
        #expect(renegotiation["client_renegotiations_success_count"] as? Int == 0, "\(renegotiation)")
        #expect(renegotiation["is_vulnerable_to_client_renegotiation_dos"] as? Bool == false, "\(renegotiation)")
    }

    @Test func aBadCertificateFileStopsStartUpWithOneLine() async throws {
        let certificates = try await TestCertificates()
        let server = try await certificates.issue("gateway")
        let other = try await certificates.issue("other")
        let redis = try await RedisServer()
        // The key of another certificate: refused at start-up, naming the key.
        let yaml = DriverYAML.make(redis: redis, extra: "tls: {cert_file: \(server.certFile), key_file: \(other.keyFile)}")
        let gateway = try await GatewayProcess(yaml: yaml, waitUntilListening: false)
        try await eventually(timeout: .seconds(20)) { !gateway.process.isRunning }
        #expect(gateway.log.contains("config error: tls: cannot use"), "\(gateway.log)")
    }
}

/// curl, for HTTPS with a chosen HTTP version and a test CA.
struct Curl {
    enum Version { case http2, http1 }

    struct Answer: CustomStringConvertible {
        let status: Int
        /// `2` or `1.1`, as curl reports the version used.
        let version: String
        let body: String
        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
        var description: String { "\(status) HTTP/\(version) \(body.prefix(400))" }
    }

    /// The CA to trust; nil for plain HTTP.
    let caFile: String?

    func call(_ version: Version, _ method: String, _ url: String, headers: [String] = [], body: String? = nil) async throws -> Answer {
        // --path-as-is: the gateway, not curl, decides what a `..` means.
        var arguments = ["-sS", "--path-as-is", "--max-time", "10", "-X", method, "-w", "\n%{http_code} %{http_version}"]
        arguments.append(version == .http2 ? "--http2" : "--http1.1")
        if let caFile { arguments += ["--cacert", caFile] }
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        arguments.append(url)
        let result = try await ShortCommand.run("/usr/bin/curl", arguments)
        guard result.status == 0, let split = result.stdout.range(of: "\n", options: .backwards) else {
            throw CurlFailed(url: url, status: result.status, stderr: result.stderr)
        }
        let trailer = result.stdout[split.upperBound...].split(separator: " ")
        return Answer(status: Int(trailer.first ?? "") ?? 0, version: String(trailer.last ?? ""), body: String(result.stdout[..<split.lowerBound]))
    }
}

struct CurlFailed: Error, CustomStringConvertible {
    let url: String
    let status: Int32
    let stderr: String
    var description: String { "curl \(url) exited \(status): \(stderr)" }
}

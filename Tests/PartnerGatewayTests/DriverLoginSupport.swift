import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Testing
import TestSupport

// Helpers for the driver login / session integration tests (DriverLogin*, DriverSession*):
// plain HTTP against real `PartnerGateway` processes, so what is tested is what a client sees.

/// One HTTP answer, kept as text so it can cross task boundaries (parallel requests).
struct DriverAnswer: Sendable, CustomStringConvertible {
    let status: UInt
    let text: String
    let headers: HTTPHeaders
    /// From just before the request was sent to the last byte of the body.
    let elapsed: Duration

    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// The body re-serialised with sorted keys: equal for equal JSON documents, whatever
    /// order the server wrote the keys in (Foundation's encoder on Linux does not keep one).
    var canonical: String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return text }
        return String(decoding: data, as: UTF8.self)
    }

    var error: [String: Any]? { json["error"] as? [String: Any] }
    var code: String? { error?["code"] as? String }

    func string(_ key: String) -> String? { json[key] as? String }
    func header(_ name: String) -> String? { headers.first(name: name) }

    /// Whether the body is exactly the spec's error shape: `{"error": {"code", "message"}}`
    /// with non-empty strings and nothing else.
    var isErrorShape: Bool {
        guard json.count == 1, let error, let code = error["code"] as? String, let message = error["message"] as? String else {
            return false
        }
        return !code.isEmpty && !message.isEmpty && Set(error.keys) == ["code", "message"]
    }

    var description: String { "\(status) \(text.prefix(400))" }
}

/// A `200` token pair (SPEC 2.3).
struct DriverTokenPair: Sendable {
    let accessToken: String
    let refreshToken: String
    let userID: String
    let isNewUser: Bool
    let answer: DriverAnswer

    init(_ answer: DriverAnswer) throws {
        try #require(answer.status == 200, "expected a token pair, got \(answer)")
        let json = answer.json
        accessToken = try #require(json["access_token"] as? String)
        refreshToken = try #require(json["refresh_token"] as? String)
        userID = try #require(json["user_id"] as? String)
        isNewUser = try #require(json["is_new_user"] as? Bool)
        self.answer = answer
    }

    /// The session id (`sid`) of the access token.
    var sessionID: String? { DriverJWT.claims(accessToken)?["sid"] as? String }
}

enum DriverHTTP {
    static func call(
        _ url: String,
        method: HTTPMethod = .GET,
        headers: [(String, String)] = [],
        body: String? = nil,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> DriverAnswer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.body = .bytes(ByteBuffer(string: body))
            if !request.headers.contains(name: "Content-Type") {
                request.headers.add(name: "Content-Type", value: "application/json")
            }
        }
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await HTTPClient.shared.execute(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 4 << 20)
        return DriverAnswer(status: response.status.code, text: String(buffer: bytes), headers: response.headers, elapsed: clock.now - start)
    }

    /// A JSON text from a dictionary (values: strings, numbers, bools, nested objects).
    static func json(_ object: [String: Any]) -> String {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// The public and admin API of one gateway, as the driver app, a partner backend and an
/// admin call it.
enum DriverAPI {
    static let uatCode = "123456"

    static func post(_ gateway: GatewayProcess, _ path: String, body: String?, headers: [(String, String)] = []) async throws -> DriverAnswer {
        try await DriverHTTP.call(gateway.baseURL + path, method: .POST, headers: headers, body: body)
    }

    static func trigger(_ gateway: GatewayProcess, phone: String) async throws -> DriverAnswer {
        try await post(gateway, "/auth/otp/trigger", body: DriverHTTP.json(["phone": phone]))
    }

    static func verify(_ gateway: GatewayProcess, phone: String, otp: String) async throws -> DriverAnswer {
        try await post(gateway, "/auth/otp/verify", body: DriverHTTP.json(["phone": phone, "otp": otp]))
    }

    static func refresh(_ gateway: GatewayProcess, _ refreshToken: String) async throws -> DriverAnswer {
        try await post(gateway, "/auth/token/refresh", body: DriverHTTP.json(["refresh_token": refreshToken]))
    }

    static func logout(_ gateway: GatewayProcess, access: String?, refreshToken: String? = nil) async throws -> DriverAnswer {
        try await post(
            gateway, "/auth/logout",
            body: refreshToken.map { DriverHTTP.json(["refresh_token": $0]) },
            headers: access.map { [("Authorization", "Bearer \($0)")] } ?? []
        )
    }

    /// `GET /user/profile` on the bearer route; `authorization` is the whole header value.
    static func profile(_ gateway: GatewayProcess, authorization: String?) async throws -> DriverAnswer {
        try await DriverHTTP.call(gateway.baseURL + "/user/profile", headers: authorization.map { [("Authorization", $0)] } ?? [])
    }

    static func profile(_ gateway: GatewayProcess, token: String) async throws -> DriverAnswer {
        try await profile(gateway, authorization: "Bearer \(token)")
    }

    /// Trigger then verify with `code` (the UAT code by default): a token pair or a failed test.
    static func login(_ gateway: GatewayProcess, phone: String, code: String = uatCode) async throws -> DriverTokenPair {
        let sent = try await trigger(gateway, phone: phone)
        try #require(sent.status == 200, "trigger: \(sent)")
        return try DriverTokenPair(try await verify(gateway, phone: phone, otp: code))
    }

    static func mint(_ gateway: GatewayProcess, key: String?, body: String) async throws -> DriverAnswer {
        try await post(gateway, "/partner/v1/sdk-token", body: body, headers: key.map { [("X-API-Key", $0)] } ?? [])
    }

    static func mint(_ gateway: GatewayProcess, key: String?, phone: String, driverID: String, name: String? = nil) async throws -> DriverAnswer {
        var body: [String: Any] = ["phone": phone, "driver_id": driverID]
        if let name { body["name"] = name }
        return try await mint(gateway, key: key, body: DriverHTTP.json(body))
    }

    static func admin(_ gateway: GatewayProcess, _ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> DriverAnswer {
        try await DriverHTTP.call(
            gateway.adminURL + path, method: method,
            headers: [("Authorization", "Bearer \(GatewayProcess.adminToken)")], body: body
        )
    }

    /// A partner through the admin API; its id.
    static func createPartner(_ gateway: GatewayProcess, name: String, rate: Double? = nil, burst: Int? = nil) async throws -> String {
        var body: [String: Any] = ["name": name]
        if let rate { body["rate"] = rate }
        if let burst { body["burst"] = burst }
        let answer = try await admin(gateway, .POST, "/v1/partners", body: DriverHTTP.json(body))
        try #require(answer.status < 300, "create partner: \(answer)")
        return try #require(answer.string("partner_id"))
    }

    /// A key of the partner through the admin API; the key itself.
    static func createKey(_ gateway: GatewayProcess, partnerID: String, scopes: [String]? = nil) async throws -> String {
        let body = scopes.map { DriverHTTP.json(["scopes": $0]) }
        let answer = try await admin(gateway, .POST, "/v1/partners/\(partnerID)/keys", body: body)
        try #require(answer.status < 300, "create key: \(answer)")
        return try #require(answer.string("key"))
    }
}

/// Configurations for the gateway processes of these tests.
enum DriverYAML {
    /// Trigger limits high enough that a test's own logins never hit them; tests of the
    /// limit pass their own.
    static let generousTriggerLimits =
        "{otp_trigger_per_phone: {capacity: 100, refill_per_second: 10}, otp_trigger_per_ip: {capacity: 1000, refill_per_second: 100}}"

    static func make(
        redis: RedisServer,
        upstream: EchoUpstreamProcess? = nil,
        otp: String = "{mode: uat}",
        rateLimits: String = generousTriggerLimits,
        tokens: String? = nil,
        redisTimeout: String = "250ms",
        log: String? = nil,
        extra: String = ""
    ) -> String {
        var yaml = """
        redis:
          url: \(redis.url)
          timeout: \(redisTimeout)
        otp: \(otp)
        rate_limits: \(rateLimits)

        """
        if let tokens { yaml += "tokens: \(tokens)\n" }
        if let log { yaml += "log: \(log)\n" }
        if !extra.isEmpty { yaml += extra + "\n" }
        if let upstream {
            yaml += """
            routes:
              - name: user-profile
                path_prefix: /user
                upstream: \(upstream.url)
                auth: bearer

            """
        }
        return yaml
    }
}

/// Reading access tokens without verifying them (the gateway verifies; tests look inside).
enum DriverJWT {
    static func segment(_ token: String, _ index: Int) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var text = parts[index].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    static func header(_ token: String) -> [String: Any]? { segment(token, 0) }
    static func claims(_ token: String) -> [String: Any]? { segment(token, 1) }
}

/// What echo-upstream reported receiving (it answers with the request it got).
enum DriverEcho {
    /// The values of a request header the upstream received (names compared case-insensitively).
    static func header(_ answer: DriverAnswer, _ name: String) -> [String]? {
        guard let headers = answer.json["headers"] as? [String: Any] else { return nil }
        for (key, value) in headers where key.lowercased() == name.lowercased() {
            return value as? [String]
        }
        return nil
    }

    static func single(_ answer: DriverAnswer, _ name: String) -> String? {
        guard let values = header(answer, name), values.count == 1 else { return nil }
        return values[0]
    }
}

/// python3 with PyJWT, the independent JWT implementation a client would use.
enum DriverPython {
    /// Runs `script` with `arguments` as `sys.argv[1...]`; its standard output.
    static func run(_ script: String, _ arguments: [String]) async throws -> String {
        let result = try await ShortCommand.run("/usr/bin/env", ["python3", "-c", script] + arguments)
        guard result.status == 0 else { throw PythonFailed(stderr: result.stderr) }
        return result.stdout
    }

    struct PythonFailed: Error, CustomStringConvertible {
        let stderr: String
        var description: String {
            "python3 failed (PyJWT is needed: `python3 -m pip install pyjwt` or `apt-get install python3-jwt`):\n\(stderr)"
        }
    }

    static func jsonObject(_ output: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "python printed: \(output)")
    }
}

/// A stand-in SMS provider: a Hummingbird server on a free loopback port, for the tests.
///
/// - `POST /sms` records the body and answers 200;
/// - `POST /fail` records the body and answers 500;
/// - `POST /hang` answers only after `hangFor`.
actor DriverSMSWebhook {
    private(set) var bodies: [String] = []

    func record(_ body: String) { bodies.append(body) }

    /// The OTP in the newest message to `+91<phone>`, if any.
    func lastCode(for phone: String) -> String? {
        for body in bodies.reversed() {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any],
                object["phone"] as? String == "+91" + phone,
                let message = object["message"] as? String
            else { continue }
            return DriverSMSWebhook.code(in: message)
        }
        return nil
    }

    /// The one run of exactly 6 digits in `message`.
    nonisolated static func code(in message: String) -> String? {
        let runs = message.split(whereSeparator: { !$0.isASCII || !$0.isNumber }).filter { $0.count == 6 }
        return runs.count == 1 ? String(runs[0]) : nil
    }

    /// Runs the server for the duration of `body`, which gets its port.
    static func serve(hangFor: Duration = .seconds(3), _ body: @Sendable (DriverSMSWebhook, Int) async throws -> Void) async throws {
        let webhook = DriverSMSWebhook()
        let router = Router()
        router.post("/sms") { request, _ -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: 1 << 16)
            await webhook.record(String(buffer: buffer))
            return .ok
        }
        router.post("/fail") { request, _ -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: 1 << 16)
            await webhook.record(String(buffer: buffer))
            return .internalServerError
        }
        router.post("/hang") { _, _ -> HTTPResponse.Status in
            try? await Task.sleep(for: hangFor)
            return .ok
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            try await body(webhook, port)
        }
    }
}

extension Duration {
    var driverMilliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}

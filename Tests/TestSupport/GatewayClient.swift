import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

// Plain HTTP against real `PartnerGateway` processes, as a driver's app, a partner backend
// and an admin call them, so what the tests check is what a client sees. Shared by the
// gateway's integration tests and the hardening scenarios.

/// One HTTP answer, kept as text so it can cross task boundaries (parallel requests).
public struct DriverResponse: Sendable, CustomStringConvertible {
    public let status: UInt
    public let text: String
    public let headers: HTTPHeaders
    /// From just before the request was sent to the last byte of the body.
    public let elapsed: Duration

    public init(status: UInt, text: String, headers: HTTPHeaders, elapsed: Duration) {
        self.status = status
        self.text = text
        self.headers = headers
        self.elapsed = elapsed
    }

    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    /// The body re-serialised with sorted keys: equal for equal JSON documents, whatever
    /// order the server wrote the keys in (Foundation's encoder on Linux does not keep one).
    public var canonical: String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return text }
        return String(decoding: data, as: UTF8.self)
    }

    public var error: [String: Any]? { json["error"] as? [String: Any] }
    public var code: String? { error?["code"] as? String }

    public func string(_ key: String) -> String? { json[key] as? String }
    public func header(_ name: String) -> String? { headers.first(name: name) }

    /// Whether the body is exactly the gateway's error shape: `{"error": {"code", "message"}}`
    /// with non-empty strings and nothing else.
    public var isErrorShape: Bool {
        guard json.count == 1, let error, let code = error["code"] as? String, let message = error["message"] as? String else {
            return false
        }
        return !code.isEmpty && !message.isEmpty && Set(error.keys) == ["code", "message"]
    }

    public var description: String { "\(status) \(text.prefix(400))" }

    /// The gateway failed closed: `503 SERVICE_UNAVAILABLE` in the error shape.
    public var isServiceUnavailable: Bool { status == 503 && code == "SERVICE_UNAVAILABLE" && isErrorShape }

    /// This answer, unless it is ``isServiceUnavailable``: then ``ServiceUnavailableAnswer``
    /// is thrown, which a test whose setup runs at a tight `redis.timeout` may start over on.
    public func available(_ call: String) throws -> DriverResponse {
        guard !isServiceUnavailable else { throw ServiceUnavailableAnswer(call: call, answer: self) }
        return self
    }
}

/// A `200` token pair (docs/public-api.md).
public struct DriverTokenPair: Sendable {
    public let accessToken: String
    public let refreshToken: String
    public let userID: String
    public let isNewUser: Bool
    public let answer: DriverResponse

    public init(_ answer: DriverResponse) throws {
        try #require(answer.status == 200, "expected a token pair, got \(answer)")
        let json = answer.json
        accessToken = try #require(json["access_token"] as? String)
        refreshToken = try #require(json["refresh_token"] as? String)
        userID = try #require(json["user_id"] as? String)
        isNewUser = try #require(json["is_new_user"] as? Bool)
        self.answer = answer
    }

    /// The session id (`sid`) of the access token.
    public var sessionID: String? { DriverJWT.claims(accessToken)?["sid"] as? String }
}

public enum DriverHTTP {
    public static func call(
        _ url: String,
        method: HTTPMethod = .GET,
        headers: [(String, String)] = [],
        body: String? = nil,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> DriverResponse {
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
        return DriverResponse(status: response.status.code, text: String(buffer: bytes), headers: response.headers, elapsed: clock.now - start)
    }

    /// A JSON text from a dictionary (values: strings, numbers, bools, nested objects).
    public static func json(_ object: [String: Any]) -> String {
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

/// The public and admin API of one gateway, as the driver app, a partner backend and an
/// admin call it.
public enum DriverAPI {
    public static let uatCode = "123456"

    public static func post(_ gateway: GatewayProcess, _ path: String, body: String?, headers: [(String, String)] = []) async throws -> DriverResponse {
        try await DriverHTTP.call(gateway.baseURL + path, method: .POST, headers: headers, body: body)
    }

    public static func trigger(_ gateway: GatewayProcess, phone: String) async throws -> DriverResponse {
        try await post(gateway, "/auth/otp/trigger", body: DriverHTTP.json(["phone": phone]))
    }

    public static func verify(_ gateway: GatewayProcess, phone: String, otp: String = uatCode) async throws -> DriverResponse {
        try await post(gateway, "/auth/otp/verify", body: DriverHTTP.json(["phone": phone, "otp": otp]))
    }

    public static func refresh(_ gateway: GatewayProcess, _ refreshToken: String) async throws -> DriverResponse {
        try await post(gateway, "/auth/token/refresh", body: DriverHTTP.json(["refresh_token": refreshToken]))
    }

    public static func logout(_ gateway: GatewayProcess, access: String?, refreshToken: String? = nil) async throws -> DriverResponse {
        try await post(
            gateway, "/auth/logout",
            body: refreshToken.map { DriverHTTP.json(["refresh_token": $0]) },
            headers: access.map { [("Authorization", "Bearer \($0)")] } ?? []
        )
    }

    /// `GET /user/profile` on the bearer route; `authorization` is the whole header value.
    public static func profile(_ gateway: GatewayProcess, authorization: String?) async throws -> DriverResponse {
        try await DriverHTTP.call(gateway.baseURL + "/user/profile", headers: authorization.map { [("Authorization", $0)] } ?? [])
    }

    public static func profile(_ gateway: GatewayProcess, token: String) async throws -> DriverResponse {
        try await profile(gateway, authorization: "Bearer \(token)")
    }

    /// Trigger then verify with `code` (the UAT code by default): a token pair, a failed test,
    /// or ``ServiceUnavailableAnswer`` thrown when either answered 503.
    public static func login(_ gateway: GatewayProcess, phone: String, code: String = uatCode) async throws -> DriverTokenPair {
        let sent = try await trigger(gateway, phone: phone).available("trigger")
        try #require(sent.status == 200, "trigger: \(sent)")
        return try DriverTokenPair(try await verify(gateway, phone: phone, otp: code).available("verify"))
    }

    public static func mint(_ gateway: GatewayProcess, key: String?, body: String) async throws -> DriverResponse {
        try await post(gateway, "/partner/v1/sdk-token", body: body, headers: key.map { [("X-API-Key", $0)] } ?? [])
    }

    public static func mint(_ gateway: GatewayProcess, key: String?, phone: String, driverID: String, name: String? = nil) async throws -> DriverResponse {
        var body: [String: Any] = ["phone": phone, "driver_id": driverID]
        if let name { body["name"] = name }
        return try await mint(gateway, key: key, body: DriverHTTP.json(body))
    }

    public static func admin(_ gateway: GatewayProcess, _ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> DriverResponse {
        try await DriverHTTP.call(
            gateway.adminURL + path, method: method,
            headers: [("Authorization", "Bearer \(GatewayProcess.adminToken)")], body: body
        )
    }

    /// A partner through the admin API; its id.
    public static func createPartner(_ gateway: GatewayProcess, name: String, rate: Double? = nil, burst: Int? = nil) async throws -> String {
        var body: [String: Any] = ["name": name]
        if let rate { body["rate"] = rate }
        if let burst { body["burst"] = burst }
        let answer = try await admin(gateway, .POST, "/v1/partners", body: DriverHTTP.json(body)).available("create partner")
        try #require(answer.status < 300, "create partner: \(answer)")
        return try #require(answer.string("partner_id"))
    }

    /// A key of the partner through the admin API; the key itself.
    public static func createKey(_ gateway: GatewayProcess, partnerID: String, scopes: [String]? = nil) async throws -> String {
        let body = scopes.map { DriverHTTP.json(["scopes": $0]) }
        let answer = try await admin(gateway, .POST, "/v1/partners/\(partnerID)/keys", body: body).available("create key")
        try #require(answer.status < 300, "create key: \(answer)")
        return try #require(answer.string("key"))
    }
}

/// Reading access tokens without verifying them (the gateway verifies; tests look inside).
public enum DriverJWT {
    public static func segment(_ token: String, _ index: Int) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var text = parts[index].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    public static func header(_ token: String) -> [String: Any]? { segment(token, 0) }
    public static func claims(_ token: String) -> [String: Any]? { segment(token, 1) }
}

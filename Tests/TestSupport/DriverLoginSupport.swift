import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

// Helpers for the driver login / session integration tests (DriverLogin*, DriverSession*):
// plain HTTP against real `PartnerGateway` processes, so what is tested is what a client sees.

/// Configurations for the gateway processes of these tests.
public enum DriverYAML {
    /// Trigger and verify-failure limits high enough that a test's own logins never hit
    /// them; tests of the limits pass their own.
    public static let generousTriggerLimits =
        "{otp_trigger_per_phone: {capacity: 100, refill_per_second: 10}, otp_trigger_per_ip: {capacity: 1000, refill_per_second: 100}, "
        + "otp_verify_failures_per_ip: {capacity: 1000, refill_per_second: 100}}"

    public static func make(
        redis: RedisServer,
        upstream: EchoUpstreamProcess? = nil,
        otp: String = "{mode: uat}",
        rateLimits: String = generousTriggerLimits,
        tokens: String? = nil,
        // Not the shipped 250 ms: on a loaded machine a login's Redis steps can take longer,
        // and a 503 then fails a test about something else. The outage tests pass their own.
        redisTimeout: String = GatewayProcess.redisTimeout,
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

/// What echo-upstream reported receiving (it answers with the request it got).
public enum DriverEcho {
    /// The values of a request header the upstream received (names compared case-insensitively).
    public static func header(_ answer: DriverResponse, _ name: String) -> [String]? {
        guard let headers = answer.json["headers"] as? [String: Any] else { return nil }
        for (key, value) in headers where key.lowercased() == name.lowercased() {
            return value as? [String]
        }
        return nil
    }

    public static func single(_ answer: DriverResponse, _ name: String) -> String? {
        guard let values = header(answer, name), values.count == 1 else { return nil }
        return values[0]
    }
}

/// python3 with PyJWT, the independent JWT implementation a client would use.
public enum DriverPython {
    /// Runs `script` with `arguments` as `sys.argv[1...]`; its standard output.
    public static func run(_ script: String, _ arguments: [String]) async throws -> String {
        let result = try await ShortCommand.run("/usr/bin/env", ["python3", "-c", script] + arguments)
        guard result.status == 0 else { throw PythonFailed(stderr: result.stderr) }
        return result.stdout
    }

    public struct PythonFailed: Error, CustomStringConvertible {
        public let stderr: String
        public var description: String {
            "python3 failed (PyJWT is needed: `python3 -m pip install pyjwt` or `apt-get install python3-jwt`):\n\(stderr)"
        }
    }

    public static func jsonObject(_ output: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "python printed: \(output)")
    }
}

/// A stand-in SMS provider (and the portal's email sender): a Hummingbird server on a free
/// loopback port, for the tests.
///
/// - `POST /sms` records the body and answers 200;
/// - `POST /fail` records the body and answers 500;
/// - `POST /hang` answers only after `hangFor`.
public actor DriverSMSWebhook {
    public private(set) var bodies: [String] = []
    /// Each call's `X-Gateway-Signature`, in the order of ``bodies``.
    public private(set) var signatures: [String?] = []

    public func record(_ body: String, signature: String? = nil) {
        bodies.append(body)
        signatures.append(signature)
    }

    /// The OTP in the newest message to `+91<phone>`, if any.
    public func lastCode(for phone: String) -> String? {
        lastCode(field: "phone", value: "+91" + phone)
    }

    /// The sign-in code in the newest message to `email` (the portal's code webhook posts
    /// `{"email", "message"}` the same way), if any.
    public func lastCode(toEmail email: String) -> String? {
        lastCode(field: "email", value: email)
    }

    private func lastCode(field: String, value: String) -> String? {
        for body in bodies.reversed() {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any],
                object[field] as? String == value,
                let message = object["message"] as? String
            else { continue }
            return DriverSMSWebhook.code(in: message)
        }
        return nil
    }

    /// The one run of exactly 6 digits in `message`.
    public nonisolated static func code(in message: String) -> String? {
        let runs = message.split(whereSeparator: { !$0.isASCII || !$0.isNumber }).filter { $0.count == 6 }
        return runs.count == 1 ? String(runs[0]) : nil
    }

    /// Runs the server for the duration of `body`, which gets its port.
    public static func serve(hangFor: Duration = .seconds(3), _ body: @Sendable (DriverSMSWebhook, Int) async throws -> Void) async throws {
        let webhook = DriverSMSWebhook()
        let router = Router()
        router.post("/sms") { request, _ -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: 1 << 16)
            await webhook.record(String(buffer: buffer), signature: request.headers[HTTPField.Name("X-Gateway-Signature")!])
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
    public var driverMilliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}

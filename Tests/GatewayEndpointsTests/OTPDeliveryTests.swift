import DriverSessions
@testable import GatewayConfiguration
@testable import GatewayEndpoints
import Logging
import Testing
import TestSupport

/// The SMS webhook's calls as its receiver sees them: each signed, checked here by an
/// implementation that is not the gateway's (Python's `hmac`), as docs/operations.md tells
/// receivers to.
@Suite("OTP delivery: signed webhook calls", .serialized)
struct OTPDeliveryTests {
    static let secret = "whsec-0123456789abcdef0123456789abcdef"

    /// The receiver's check of docs/operations.md: `t` within 5 minutes, `v1` the HMAC-SHA256
    /// of `"<t>.<body>"`, compared in constant time. Prints one verdict per secret.
    static let receiver = """
        import hashlib, hmac, sys, time
        body, header, secrets = sys.argv[1], sys.argv[2], sys.argv[3:]
        fields = dict(part.split("=", 1) for part in header.split(","))
        t = int(fields["t"])
        def valid(secret):
            expected = hmac.new(secret.encode(), f"{t}.{body}".encode(), hashlib.sha256).hexdigest()
            return hmac.compare_digest(expected, fields["v1"]) and abs(time.time() - t) <= 300
        print(" ".join("valid" if valid(secret) else "invalid" for secret in secrets))
        """

    @Test func eachCallIsSignedAndOnlyTheRightSecretVerifiesIt() async throws {
        try await DriverSMSWebhook.serve { webhook, port in
            let delivery = OTPDelivery(
                mode: .webhook(url: "http://127.0.0.1:\(port)/sms", secret: Secret(Self.secret), timeout: .seconds(5)),
                lifetime: .seconds(600), httpClient: WebhookClient.shared, logger: Logger(label: "test")
            )
            try await delivery.deliver("123456", to: try #require(PhoneNumber("9876543210")))
            try await delivery.deliver("654321", to: try #require(PhoneNumber("9876543211")))
            let bodies = await webhook.bodies
            let signatures = await webhook.signatures
            try #require(bodies.count == 2 && signatures.count == 2)
            for (body, signature) in zip(bodies, signatures) {
                let header = try #require(signature, "a webhook call without X-Gateway-Signature")
                #expect(header.wholeMatch(of: /t=[0-9]+,v1=[0-9a-f]{64}/) != nil, "\(header)")
                let verdicts = try await DriverPython.run(Self.receiver, [body, header, Self.secret, Self.secret + "x"])
                #expect(verdicts == "valid invalid\n")
            }
            // Another body under the same header does not verify.
            let swapped = try await DriverPython.run(Self.receiver, [bodies[1], try #require(signatures[0]), Self.secret])
            #expect(swapped == "invalid\n")
        }
    }
}

import ArgumentParser
import Foundation

/// The options every command takes. The URL and token fall back to environment variables
/// here rather than through `@Option` defaults, so `--help` never prints the token.
struct GlobalOptions: ParsableArguments {
    static let defaultAdminURL = "http://127.0.0.1:9090"

    @Option(
        name: .customLong("admin-url"),
        help: ArgumentHelp(
            "The gateway's admin API (default: $GATEWAY_ADMIN_URL, else \(Self.defaultAdminURL)).",
            valueName: "url"
        )
    )
    var adminURL: String?

    @Option(
        name: .customLong("admin-token"),
        help: ArgumentHelp("The admin token (default: $GATEWAY_ADMIN_TOKEN).", valueName: "token")
    )
    var adminToken: String?

    @Flag(help: "Print one JSON document instead of a table.")
    var json = false

    private var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The URL in effect and where it came from, for error messages.
    var resolvedAdminURL: (text: String, source: String) {
        if let adminURL { return (adminURL, "--admin-url") }
        if let fromEnvironment = environment["GATEWAY_ADMIN_URL"], !fromEnvironment.isEmpty {
            return (fromEnvironment, "GATEWAY_ADMIN_URL")
        }
        return (Self.defaultAdminURL, "the default")
    }

    var resolvedAdminToken: String? {
        let token = adminToken ?? environment["GATEWAY_ADMIN_TOKEN"]
        return token?.isEmpty == false ? token : nil
    }

    func validate() throws {
        let (text, source) = resolvedAdminURL
        guard AdminClient.baseURL(text) != nil else {
            throw ValidationError("the admin URL '\(text)' (from \(source)) is not an http:// or https:// URL")
        }
    }

    /// A client for the admin API; fails with exit code 3 before any request when there is no
    /// token, since every admin path needs one.
    func client() throws -> AdminClient {
        guard let token = resolvedAdminToken else { throw CtlError.missingToken }
        guard let url = AdminClient.baseURL(resolvedAdminURL.text) else {
            throw ValidationError("the admin URL '\(resolvedAdminURL.text)' is not an http:// or https:// URL")
        }
        return AdminClient(baseURL: url, token: token, actor: AdminClient.actor(environment: environment))
    }

    var printer: Printer { Printer(json: json) }
}

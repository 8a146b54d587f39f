import ArgumentParser
import Foundation

/// Where the admin API is and the credential to call it with: the options every command
/// takes. The URL and token fall back to a profile and to environment variables here rather
/// than through `@Option` defaults, so `--help` never prints a token.
///
/// Where the URL and token come from, first match wins:
/// 1. `--admin-url`; `--admin-token`, then `--admin-token-file`;
/// 2. the profile named by `--profile`;
/// 3. `GATEWAY_ADMIN_URL`; `GATEWAY_ADMIN_TOKEN`, then `GATEWAY_ADMIN_TOKEN_FILE`;
/// 4. the profile file's `default_profile`;
/// 5. the URL `http://127.0.0.1:9090` (there is no default token).
///
/// An explicit `--profile` beats the environment so that `--profile production` can never
/// quietly act on whatever a shell exported; the default profile does not.
struct ConnectionOptions: ParsableArguments {
    static let defaultAdminURL = "http://127.0.0.1:9090"

    @Option(
        name: .customLong("admin-url"),
        help: ArgumentHelp("The gateway's admin API (default: the profile's url, $GATEWAY_ADMIN_URL, else \(Self.defaultAdminURL)).", valueName: "url")
    )
    var adminURL: String?

    @Option(
        name: .customLong("admin-token"),
        help: ArgumentHelp("The admin token. Visible to other users in 'ps': prefer --admin-token-file.", valueName: "token")
    )
    var adminToken: String?

    @Option(
        name: .customLong("admin-token-file"),
        help: ArgumentHelp("A file holding the admin token (default: $GATEWAY_ADMIN_TOKEN_FILE or the profile's token_file).", valueName: "path")
    )
    var adminTokenFile: String?

    @Option(help: ArgumentHelp("A profile of the config file ($XDG_CONFIG_HOME/gatewayctl/config.yaml, else ~/.config/gatewayctl/config.yaml).", valueName: "name"))
    var profile: String?

    private var environment: [String: String] { ProcessInfo.processInfo.environment }

    func validate() throws {
        if let adminURL, AdminClient.baseURL(adminURL) == nil {
            throw ValidationError("the admin URL '\(adminURL)' (from --admin-url) is not an http:// or https:// URL")
        }
        if adminToken != nil, adminTokenFile != nil {
            throw ValidationError("give --admin-token or --admin-token-file, not both")
        }
    }

    /// A client for the admin API; fails with exit code 3 before any request when there is no
    /// token, since every admin path needs one.
    func client() throws -> AdminClient {
        let settings = try resolve(environment: environment)
        guard let token = settings.token else { throw CtlError.missingToken }
        guard let url = AdminClient.baseURL(settings.url.text) else {
            throw CtlError.usage("the admin URL '\(settings.url.text)' (from \(settings.url.source)) is not an http:// or https:// URL")
        }
        return AdminClient(baseURL: url, token: token, actor: AdminClient.actor(environment: environment))
    }

    /// The URL and token in effect, each with where it came from (for error messages).
    struct Settings {
        var url: (text: String, source: String)
        var token: String?
    }

    func resolve(environment: [String: String]) throws -> Settings {
        let file = try profileFile(environment: environment)
        var explicit: (name: String, profile: ProfileFile.Profile)?
        if let profile {
            guard let file, let found = file.contents.profiles[profile] else {
                let path = ProfileFile.path(environment: environment) ?? "the profile file"
                throw CtlError.usage("no profile '\(profile)' in \(path)")
            }
            explicit = (profile, found)
        }
        let fallback = file.flatMap { file in file.contents.defaultProfile.flatMap { name in file.contents.profiles[name].map { (name, $0) } } }

        let url: (String, String) =
            adminURL.map { ($0, "--admin-url") }
            ?? explicit.flatMap { named in named.profile.url.map { ($0, "profile \(named.name)") } }
            ?? environment["GATEWAY_ADMIN_URL"].flatMap { $0.isEmpty ? nil : ($0, "GATEWAY_ADMIN_URL") }
            ?? fallback.flatMap { named in named.1.url.map { ($0, "profile \(named.0)") } }
            ?? (Self.defaultAdminURL, "the default")

        let home = environment["HOME"]
        func profileToken(_ named: (String, ProfileFile.Profile)?) throws -> String? {
            guard let named, let tokenFile = named.1.tokenFile, let file else { return nil }
            let path = ProfileFile.resolve(tokenFile, relativeTo: file.path, home: home)
            return try AdminToken.read(path: path, source: "profile \(named.0)")
        }
        var token: String?
        if let adminToken, !adminToken.isEmpty {
            token = adminToken
        } else if let adminTokenFile {
            token = try AdminToken.read(path: adminTokenFile, source: "--admin-token-file")
        } else if let fromProfile = try profileToken(explicit.map { ($0.name, $0.profile) }) {
            token = fromProfile
        } else if let fromEnvironment = environment["GATEWAY_ADMIN_TOKEN"], !fromEnvironment.isEmpty {
            token = fromEnvironment
        } else if let path = environment["GATEWAY_ADMIN_TOKEN_FILE"], !path.isEmpty {
            token = try AdminToken.read(path: path, source: "GATEWAY_ADMIN_TOKEN_FILE")
        } else {
            token = try profileToken(fallback)
        }
        return Settings(url: url, token: token)
    }

    private func profileFile(environment: [String: String]) throws -> (path: String, contents: ProfileFile)? {
        guard let path = ProfileFile.path(environment: environment), let contents = try ProfileFile.load(path: path) else { return nil }
        return (path, contents)
    }
}

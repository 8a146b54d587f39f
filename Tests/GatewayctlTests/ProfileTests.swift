import Foundation
import TestSupport
import Testing
@testable import gatewayctl

/// Where the admin URL and token come from: flags, `--profile`, the environment, the
/// default profile, in that order; token files read and checked.
@Suite struct ProfileTests {
    /// A fresh XDG_CONFIG_HOME with `config.yaml` (when given) and token files.
    struct ConfigHome {
        let path: String
        private let folder: TemporaryFolder

        init(_ config: String?, tokens: [String: String] = [:]) throws {
            folder = try TemporaryFolder("gatewayctl-profiles")
            path = folder.path
            try FileManager.default.createDirectory(atPath: path + "/gatewayctl", withIntermediateDirectories: true)
            if let config { try config.write(toFile: path + "/gatewayctl/config.yaml", atomically: true, encoding: .utf8) }
            for (name, token) in tokens {
                try token.write(toFile: path + "/gatewayctl/" + name, atomically: true, encoding: .utf8)
                // Private, as token files should be: no permission warning in the test output.
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path + "/gatewayctl/" + name)
            }
        }

        var environment: [String: String] { ["XDG_CONFIG_HOME": path, "HOME": "/nonexistent"] }
    }

    private static let twoProfiles = """
        default_profile: staging
        profiles:
          staging:
            url: http://staging.internal:9090
            token_file: staging.token
          production:
            url: https://prod.internal:9090
            token_file: prod.token
        """

    private func settings(_ arguments: [String], _ environment: [String: String]) throws -> ConnectionOptions.Settings {
        try ConnectionOptions.parse(arguments).resolve(environment: environment)
    }

    @Test func theDefaultProfileApplies() throws {
        let home = try ConfigHome(Self.twoProfiles, tokens: ["staging.token": "staging-token\n", "prod.token": "prod-token"])
        let chosen = try settings([], home.environment)
        #expect(chosen.url.text == "http://staging.internal:9090")
        #expect(chosen.token == "staging-token", "the trailing newline is dropped")
    }

    @Test func anExplicitProfileBeatsTheEnvironmentButFlagsBeatIt() throws {
        let home = try ConfigHome(Self.twoProfiles, tokens: ["staging.token": "staging-token", "prod.token": "prod-token"])
        var environment = home.environment
        environment["GATEWAY_ADMIN_URL"] = "http://from-env:9090"
        environment["GATEWAY_ADMIN_TOKEN"] = "env-token"
        let production = try settings(["--profile", "production"], environment)
        #expect(production.url.text == "https://prod.internal:9090" && production.token == "prod-token")
        // Without --profile the environment beats the default profile.
        let plain = try settings([], environment)
        #expect(plain.url.text == "http://from-env:9090" && plain.token == "env-token")
        let flags = try settings(["--profile", "production", "--admin-url", "http://flag:1", "--admin-token", "flag-token"], environment)
        #expect(flags.url.text == "http://flag:1" && flags.token == "flag-token")
    }

    @Test func tokenFilesFromTheFlagAndTheEnvironment() throws {
        let home = try ConfigHome(nil, tokens: ["a.token": "  from-flag-file \n", "b.token": "from-env-file"])
        let flag = try settings(["--admin-token-file", home.path + "/gatewayctl/a.token"], home.environment)
        #expect(flag.token == "from-flag-file")
        #expect(flag.url.text == ConnectionOptions.defaultAdminURL)
        var environment = home.environment
        environment["GATEWAY_ADMIN_TOKEN_FILE"] = home.path + "/gatewayctl/b.token"
        #expect(try settings([], environment).token == "from-env-file")
        environment["GATEWAY_ADMIN_TOKEN"] = "plain"
        #expect(try settings([], environment).token == "plain", "the variable holding the token itself wins over the file variable")
    }

    @Test func badTokenFilesExitWithThreeAndNameTheFile() throws {
        let home = try ConfigHome(nil, tokens: ["empty.token": "\n", "two.token": "a\nb\n"])
        for (name, words) in [("missing.token", "cannot read"), ("empty.token", "is empty"), ("two.token", "more than one line")] {
            let path = home.path + "/gatewayctl/" + name
            let error = #expect(throws: CtlError.self) { try settings(["--admin-token-file", path], home.environment) }
            #expect(error?.exitCode == 3)
            #expect(error?.message.contains(path) == true && error?.message.contains(words) == true, "\(error?.message ?? "")")
        }
    }

    @Test(arguments: [
        ("profiles:\n  a:\n    url: http://x\n    token: secret\n", "profiles.a.token: unknown key"),
        ("profile: {}\n", "profile: unknown key"),
        ("default_profile: nope\nprofiles: {}\n", "default_profile: names no profile"),
        ("profiles: [1, 2]\n", "profiles: has the wrong type"),
    ])
    func aBadProfileFileIsAUsageErrorNamingTheKey(_ config: String, _ words: String) throws {
        let home = try ConfigHome(config)
        let error = #expect(throws: CtlError.self) { try settings([], home.environment) }
        #expect(error?.exitCode == 64)
        #expect(error?.message.contains(words) == true, "\(error?.message ?? "")")
    }

    @Test func anUnknownProfileIsAUsageError() throws {
        let home = try ConfigHome(Self.twoProfiles)
        let error = #expect(throws: CtlError.self) { try settings(["--profile", "qa"], home.environment) }
        #expect(error?.exitCode == 64)
        #expect(error?.message.contains("no profile 'qa'") == true)
        let none = try ConfigHome(nil)
        #expect(throws: CtlError.self) { try settings(["--profile", "qa"], none.environment) }
    }

    @Test func theFileIsFoundUnderXDGConfigHomeElseHome() {
        #expect(ProfileFile.path(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/gatewayctl/config.yaml")
        #expect(ProfileFile.path(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"]) == "/h/.config/gatewayctl/config.yaml")
        #expect(ProfileFile.path(environment: ["HOME": "/h"]) == "/h/.config/gatewayctl/config.yaml")
        #expect(ProfileFile.resolve("~/t", relativeTo: "/c/config.yaml", home: "/h") == "/h/t")
        #expect(ProfileFile.resolve("t", relativeTo: "/c/config.yaml", home: "/h") == "/c/t")
        #expect(ProfileFile.resolve("/abs/t", relativeTo: "/c/config.yaml", home: "/h") == "/abs/t")
    }
}

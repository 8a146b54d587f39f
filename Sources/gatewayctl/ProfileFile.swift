import Foundation
import Yams

/// `~/.config/gatewayctl/config.yaml` (under `$XDG_CONFIG_HOME` when it is set): named
/// profiles, each an admin URL and the file holding its token, so staging and production are
/// one `--profile` apart and no token sits in the file or on a command line.
///
/// ```yaml
/// default_profile: staging
/// profiles:
///   staging:
///     url: https://gateway-staging.internal:9090
///     token_file: ~/.config/gatewayctl/staging.token
/// ```
///
/// Unknown keys are refused, as in the gateway's own configuration: a misspelt `tokenfile`
/// must not silently fall back to another token.
struct ProfileFile: Decodable, Equatable {
    struct Profile: Decodable, Equatable {
        var url: String?
        /// `~` means the home directory; a relative path is relative to the config file.
        var tokenFile: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case url
            case tokenFile = "token_file"
        }

        init(from decoder: any Decoder) throws {
            try UnknownKeys.refuse(in: decoder, allowed: CodingKeys.allCases.map(\.stringValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            url = try container.decodeIfPresent(String.self, forKey: .url)
            tokenFile = try container.decodeIfPresent(String.self, forKey: .tokenFile)
        }
    }

    var defaultProfile: String?
    var profiles: [String: Profile]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case defaultProfile = "default_profile"
        case profiles
    }

    init(from decoder: any Decoder) throws {
        try UnknownKeys.refuse(in: decoder, allowed: CodingKeys.allCases.map(\.stringValue))
        let container = try decoder.container(keyedBy: CodingKeys.self)
        defaultProfile = try container.decodeIfPresent(String.self, forKey: .defaultProfile)
        profiles = try container.decodeIfPresent([String: Profile].self, forKey: .profiles) ?? [:]
        if let defaultProfile, profiles[defaultProfile] == nil {
            throw DecodingError.dataCorrupted(.init(codingPath: [CodingKeys.defaultProfile], debugDescription: "names no profile in profiles"))
        }
    }

    /// Where the file is looked for: `$XDG_CONFIG_HOME/gatewayctl/config.yaml`, else
    /// `$HOME/.config/gatewayctl/config.yaml`.
    static func path(environment: [String: String]) -> String? {
        if let base = environment["XDG_CONFIG_HOME"], base.hasPrefix("/") {
            return base + "/gatewayctl/config.yaml"
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.config/gatewayctl/config.yaml"
    }

    /// The file at `path`, nil when there is none; a file that cannot be read or is not a
    /// valid profile file is a usage error naming the file and the key.
    static func load(path: String) throws -> ProfileFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw CtlError.usage("cannot read \(path)")
        }
        do {
            return try YAMLDecoder().decode(ProfileFile.self, from: text.isEmpty ? "{}" : text)
        } catch let DecodingError.dataCorrupted(context) {
            throw CtlError.usage("\(path): \(Self.keyPath(context.codingPath)): \(context.debugDescription)")
        } catch let DecodingError.typeMismatch(_, context) {
            throw CtlError.usage("\(path): \(Self.keyPath(context.codingPath)): has the wrong type")
        } catch {
            throw CtlError.usage("\(path) is not valid YAML")
        }
    }

    private static func keyPath(_ path: [any CodingKey]) -> String {
        path.isEmpty ? "the file" : path.map(\.stringValue).joined(separator: ".")
    }

    /// `~/x` and paths relative to the config file's directory, made absolute.
    static func resolve(_ tokenFile: String, relativeTo configPath: String, home: String?) -> String {
        if tokenFile == "~" || tokenFile.hasPrefix("~/"), let home {
            return home + tokenFile.dropFirst()
        }
        if tokenFile.hasPrefix("/") { return tokenFile }
        return (configPath as NSString).deletingLastPathComponent + "/" + tokenFile
    }
}

/// Refuses keys a strict mapping does not know, naming the first one.
enum UnknownKeys {
    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static func refuse(in decoder: any Decoder, allowed: [String]) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        if let unknown = container.allKeys.map(\.stringValue).sorted().first(where: { !allowed.contains($0) }) {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [AnyKey(stringValue: unknown)], debugDescription: "unknown key"))
        }
    }
}

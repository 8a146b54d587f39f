import ArgumentParser
import Foundation
import GatewayState

/// `-f` and `--prune`, and the flow `diff` and `apply` share: the files read and checked
/// (refused whole, each problem at its file and line), the gateway read, the plan made.
struct StateOptions: ParsableArguments {
    /// Admin API calls under way at once (and connections kept for them): reading or
    /// changing thousands of resources one call at a time would take minutes of round trips.
    static let parallelCalls = 16

    @Option(
        name: [.customShort("f"), .customLong("file")],
        help: ArgumentHelp("A state file, or a directory of them (every .yaml and .yml under it); repeat for more.", valueName: "path")
    )
    var files: [String] = []

    @Flag(help: "Also remove what the files do not name: keys and admin credentials are revoked, members removed, partners disabled.")
    var prune = false

    /// The files as one document; every problem printed on stderr, one line each, when any.
    func document(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> StateDocument {
        let sources = try StateFiles.sources(files)
        do {
            return try StateFileReader(environment: environment).read(sources)
        } catch {
            for problem in error.problems { StandardError.writeLine("error: \(problem)") }
            let count = error.problems.count
            throw CtlError.usage("\(count) \(count == 1 ? "problem" : "problems") in the state files; nothing was changed")
        }
    }

    /// What applying `document` would change, from what the gateway holds now.
    func plan(_ document: StateDocument, client: AdminClient) async throws -> StatePlan {
        let snapshot = try await GatewaySnapshot.load(from: client, admins: document.admins != nil, width: Self.parallelCalls)
        return StatePlanner(prune: prune, applyingCredentialStart: Self.start(of: client.token)).plan(document, against: snapshot)
    }

    /// A personal credential's `start` (`pga_live_` and 4 characters), which the gateway
    /// shows for it: the credential prune must spare. nil for the break-glass token.
    static func start(of token: String) -> String? {
        token.hasPrefix("pga_live_") && token.count > 13 ? String(token.prefix(13)) : nil
    }
}

import Foundation
import PackagePlugin

/// Writes `GeneratedBuildInfo.swift` (the git commit the tree is at, `-dirty` when tracked
/// files differ from it, `unknown` outside git) before every build of the target, so
/// `PartnerGateway --version`, `gateway_build_info` and `gatewayctl version` name the commit
/// they were built from. The file is rewritten only when
/// the commit changes, so an unchanged tree recompiles nothing.
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "GeneratedBuildInfo.swift")
        let script = """
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
            if [ "$commit" != unknown ] && [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
              commit="$commit-dirty"
            fi
            next=$(mktemp)
            printf 'enum GeneratedBuildInfo {\\n    static let commit = "%s"\\n}\\n' "$commit" > "$next"
            if cmp -s "$next" "$2"; then rm -f "$next"; else mv "$next" "$2"; fi
            """
        return [.prebuildCommand(
            displayName: "Recording the git commit for --version",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", script, "build-info", context.package.directoryURL.path, output.path],
            outputFilesDirectory: context.pluginWorkDirectoryURL
        )]
    }
}

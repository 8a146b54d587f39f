import Foundation

/// The executables `swift build` put beside the test bundle (PartnerGateway, echo-upstream,
/// gatewayctl), so tests run the very binaries a user runs.
public enum BuiltProduct {
    /// `PG_BUILT_PRODUCTS` names another folder of those executables (another build's, say a
    /// release build or an earlier commit's, to see a regression test fail there).
    public static func path(_ name: String) -> String {
        if let folder = ProcessInfo.processInfo.environment["PG_BUILT_PRODUCTS"], !folder.isEmpty {
            return URL(fileURLWithPath: folder).appendingPathComponent(name).path
        }
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        // On Linux the test runner is `<bin>/<package>PackageTests.xctest`, on macOS a bundle.
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path),
              directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.appendingPathComponent(name).path
    }
}

import Foundation

/// A new folder in the system's temporary directory for what a test helper writes (its
/// configuration, a child process's output, certificates), removed with everything in it when
/// the last reference goes: a suite run leaves nothing behind in `/tmp`. With
/// `PG_KEEP_TEST_FILES=1` in the environment the folders stay, to read a failed run's logs.
public final class TemporaryFolder: Sendable {
    public let url: URL

    /// A folder named `prefix` and a random suffix.
    public init(_ prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        guard ProcessInfo.processInfo.environment["PG_KEEP_TEST_FILES"] == nil else { return }
        try? FileManager.default.removeItem(at: url)
    }

    public var path: String { url.path }

    /// The path of `name` in the folder.
    public func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }
}

import Logging
import Synchronization

/// The process's log level, one value every log handler reads, so `log.level` can change
/// on a configuration reload without rebuilding loggers.
package final class LogLevelSwitch: Sendable {
    private let raw: Atomic<Int>

    package init(_ level: Logger.Level) {
        raw = Atomic(Self.levels.firstIndex(of: level)!)
    }

    package var level: Logger.Level {
        get { Self.levels[raw.load(ordering: .relaxed)] }
        set { raw.store(Self.levels.firstIndex(of: newValue)!, ordering: .relaxed) }
    }

    private static let levels = Logger.Level.allCases
}

import Synchronization

/// The problems found while decoding one configuration file, so that a run reports all of
/// them instead of stopping at the first.
///
/// Swift's `Decodable` stops at the first error it throws; configuration sections
/// (``ConfigSection``) instead record an unknown key or a bad value here, keep the
/// default for it and read on, whenever a collector is installed for the decode
/// (``GatewayConfig/decode(yaml:)``). It travels as a task-local because a decoder's
/// containers cannot carry anything of their own.
package final class ConfigProblems: Sendable {
    @TaskLocal package static var current: ConfigProblems?

    private let problems = Mutex([ConfigError]())

    package func add(_ problem: ConfigError) {
        problems.withLock { $0.append(problem) }
    }

    package var all: [ConfigError] {
        problems.withLock { $0 }
    }
}

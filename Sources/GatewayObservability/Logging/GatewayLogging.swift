import GatewayConfiguration
import Logging

/// Installs the process's log handler for `log.format` (once per process: swift-log allows
/// one bootstrap), with the level ``LogLevelSwitch`` that a configuration reload adjusts.
package enum GatewayLogging {
    package static func bootstrap(_ config: GatewayConfig.Log) -> LogLevelSwitch {
        let levels = LogLevelSwitch(Logger.Level(rawValue: config.level.rawValue) ?? .info)
        let format = config.format
        LoggingSystem.bootstrap { label in
            switch format {
            case .json: JSONLogHandler(label: label, levels: levels)
            case .text: TextLogHandler(label: label, levels: levels)
            }
        }
        return levels
    }
}

import Logging

/// `log.format: text`: swift-log's plain lines on standard error, with the level of the
/// process-wide ``LogLevelSwitch`` like ``JSONLogHandler``.
package struct TextLogHandler: LogHandler {
    private var base: StreamLogHandler
    private var ownLevel: Logger.Level?
    private let levels: LogLevelSwitch

    package init(label: String, levels: LogLevelSwitch) {
        base = StreamLogHandler.standardError(label: label)
        base.logLevel = .trace  // The level is decided here, not by the stream handler.
        self.levels = levels
    }

    package var logLevel: Logger.Level {
        get { ownLevel ?? levels.level }
        set { ownLevel = newValue }
    }

    package var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    package func log(event: LogEvent) {
        base.log(event: event)
    }
}

import Logging

/// `log.format: text`: swift-log's plain lines on standard error, with the level of the
/// process-wide ``LogLevelSwitch`` like ``JSONLogHandler``, and like it without Hummingbird's
/// internal request counter: a line about a request carries one id, `request_id`.
package struct TextLogHandler: LogHandler {
    private var base: StreamLogHandler
    private var ownLevel: Logger.Level?
    private let levels: LogLevelSwitch
    /// `hb.request.id`, kept apart from the metadata the lines print: Hummingbird reads it
    /// back (`context.id`), so it is stored, just never written.
    private var hummingbirdRequestID: Logger.Metadata.Value?
    private static let hummingbirdRequestIDKey = "hb.request.id"

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
        get {
            var metadata = base.metadata
            metadata[Self.hummingbirdRequestIDKey] = hummingbirdRequestID
            return metadata
        }
        set {
            var printed = newValue
            hummingbirdRequestID = printed.removeValue(forKey: Self.hummingbirdRequestIDKey)
            base.metadata = printed
        }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { key == Self.hummingbirdRequestIDKey ? hummingbirdRequestID : base[metadataKey: key] }
        set {
            if key == Self.hummingbirdRequestIDKey {
                hummingbirdRequestID = newValue
            } else {
                base[metadataKey: key] = newValue
            }
        }
    }

    package func log(event: LogEvent) {
        base.log(event: event)
    }
}

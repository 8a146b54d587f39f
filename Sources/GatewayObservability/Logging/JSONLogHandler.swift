import Foundation
import Logging

/// `log.format: json`: one JSON object per line on standard error, e.g.
/// `{"ts":"2026-11-22T10:41:00.123Z","level":"warning","logger":"partner-gateway","msg":"upstream unavailable","request_id":"4f9c...","route":"echo","kind":"refused"}`.
///
/// The level is the process-wide ``LogLevelSwitch`` (so a configuration reload changes it for
/// every logger at once) unless a logger sets its own.
package struct JSONLogHandler: LogHandler {
    package let label: String
    package var metadata: Logger.Metadata = [:]
    private var ownLevel: Logger.Level?
    private let levels: LogLevelSwitch
    private let output: LogOutput

    package init(label: String, levels: LogLevelSwitch, output: LogOutput = .standardError) {
        self.label = label
        self.levels = levels
        self.output = output
    }

    package var logLevel: Logger.Level {
        get { ownLevel ?? levels.level }
        set { ownLevel = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        var line = JSONLine(appendingTo: &buffer)
        line.timestamp()
        line.string("level", event.level.rawValue)
        line.string("logger", label)
        line.string("msg", "\(event.message)")
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        for key in merged.keys.sorted() where !Self.reservedKeys.contains(key) && key != Self.hummingbirdRequestID {
            line.string(named: key, Self.text(merged[key]!))
        }
        line.finish(into: &buffer)
        output.write(buffer)
    }

    /// The fields every line starts with; metadata cannot overwrite them.
    private static let reservedKeys: Set<String> = ["ts", "level", "logger", "msg"]

    /// Hummingbird's internal per-request counter: lines carry `request_id` (the
    /// `X-Request-Id` clients and upstreams see) instead.
    private static let hummingbirdRequestID = "hb.request.id"

    private static func text(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        case .array, .dictionary: value.description
        }
    }
}

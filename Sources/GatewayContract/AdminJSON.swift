import Foundation

/// How the admin API writes JSON: times as RFC 3339 strings in UTC with seconds precision
/// (`2026-11-22T03:30:00Z`), keys sorted so documents diff cleanly.
public enum AdminJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

import Foundation
import GatewayConfiguration
import GatewayEdge
import Hummingbird
import NIOCore
import NIOFoundationCompat

/// Reads small JSON request bodies (auth and admin endpoints) into `Decodable` values.
///
/// Anything that is not the expected JSON is the client's mistake and gets
/// `400 INVALID_REQUEST` with a short reason that never echoes the body, including a body
/// over the context's `maxUploadSize` (64 KiB): these endpoints take a few small fields, so
/// an oversized body is a malformed request, not an upload to refuse with 413 (which is kept
/// for proxied bodies over `max_body_bytes`).
enum JSONBody {
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, context: some RequestContext, allowEmpty: Bool = false) async throws -> T {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: context.maxUploadSize)
        } catch {
            throw GatewayError.invalidRequest("the body is larger than \(context.maxUploadSize / 1024) KiB")
        }
        var data = Data(buffer: buffer)
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            guard allowEmpty else { throw GatewayError.invalidRequest("a JSON body is required") }
            data = Data("{}".utf8)
        }
        do {
            // Times as the admin API writes them (RFC 3339, `2027-01-31T00:00:00Z`).
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, _) {
            throw GatewayError.invalidRequest("missing field \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context) {
            throw GatewayError.invalidRequest("field \"\(ConfigError.keyPath(context.codingPath))\" has the wrong type")
        } catch let DecodingError.valueNotFound(_, context) {
            throw GatewayError.invalidRequest("field \"\(ConfigError.keyPath(context.codingPath))\" must not be null")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw GatewayError.invalidRequest("field \"\(ConfigError.keyPath(context.codingPath))\" is malformed (times are RFC 3339, 2027-01-31T00:00:00Z)")
        } catch let error as GatewayError {
            throw error
        } catch {
            throw GatewayError.invalidRequest("the body is not valid JSON")
        }
    }
}

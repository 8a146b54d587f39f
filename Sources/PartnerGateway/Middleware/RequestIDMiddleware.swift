import HTTPTypes
import Hummingbird

/// Gives every request an `X-Request-Id` and echoes it on every response.
///
/// A client's id is kept only when it is sane (1 to 128 characters of `A-Z a-z 0-9 - _ . :`),
/// so it cannot smuggle log injections or huge values into upstreams and logs.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let requestID = request.headers[.xRequestID].flatMap { Self.isSane($0) ? $0 : nil } ?? Self.generate()
        context.requestID = requestID
        var response = try await next(request, context)
        response.headers[.xRequestID] = requestID
        return response
    }

    static func isSane(_ id: String) -> Bool {
        let utf8 = id.utf8
        guard (1...128).contains(utf8.count) else { return false }
        return utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                 UInt8(ascii: "."), UInt8(ascii: ":"):
                true
            default:
                false
            }
        }
    }

    /// 128 random bits as 32 hex characters.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return Hex.string(high) + Hex.string(low)
    }
}

extension HTTPField.Name {
    static let xRequestID = HTTPField.Name("X-Request-Id")!
}

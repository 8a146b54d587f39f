import ExtrasBase64
import GatewayAdmission
import GatewayEdge
import GatewayPrimitives
import NIOHTTP1

/// How a browser, which cannot set `Authorization` on a WebSocket, presents its access
/// token: as one of the subprotocols it offers, `base64url.bearer.authorization.gateway.<token
/// in base64url>`, beside the real one (Kubernetes' convention). Never in the URL, so never in
/// an access line. The gateway turns it into the request's `Authorization` before admission
/// and drops it from what the upstream is offered; the upstream picks the real subprotocol
/// and its `101` names it.
package enum WebSocketTokenProtocol {
    package static let prefix = "base64url.bearer.authorization.gateway."

    /// `head` with its token subprotocol, if any, taken out into `Authorization`; or the
    /// error refusing the handshake (two credentials, a token that does not decode, no
    /// real subprotocol beside it, a route that takes no bearer tokens).
    package static func apply(to head: inout HTTPRequestHead, bearerRoute: Bool) -> GatewayError? {
        let offered = head.headers["sec-websocket-protocol"].flatMap { $0.split(separator: ",") }.map { trimmed($0) }
        let tokens = offered.filter { $0.hasPrefix(prefix) }
        guard !tokens.isEmpty else { return nil }
        guard bearerRoute else { return .invalidRequest("this route takes no bearer token") }
        guard tokens.count == 1, !head.headers.contains(name: HeaderName.authorization.name) else {
            return .invalidRequest("more than one credential")
        }
        let others = offered.filter { !$0.hasPrefix(prefix) }
        guard !others.isEmpty else { return .invalidRequest("offer a subprotocol besides the token") }
        guard let decoded = try? Base64.decode(string: String(tokens[0].dropFirst(prefix.count)), options: [.base64UrlAlphabet, .omitPaddingCharacter]),
              !decoded.isEmpty, decoded.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return BearerAuthenticator.invalid }
        head.headers.remove(name: "sec-websocket-protocol")
        head.headers.add(name: "Sec-WebSocket-Protocol", value: others.joined(separator: ", "))
        head.headers.add(name: HeaderName.authorization.name, value: "Bearer " + String(decoding: decoded, as: UTF8.self))
        return nil
    }

    private static func trimmed(_ value: Substring) -> String {
        var text = value
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}

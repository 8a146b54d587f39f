import GatewayEdge
import GatewayPrimitives
import NIOHTTP1

/// Whether a proxied request asks to switch protocols, and whether its route lets it: only
/// a WebSocket handshake (`GET`, HTTP/1.1, `Upgrade: websocket`) on a route with
/// `websocket: true` upgrades. Any other upgrade is refused in the error shape rather than
/// answered as if it had not been asked (a client would take that for a broken server).
package enum WebSocketHandshake: Equatable, Sendable {
    /// No upgrade asked.
    case none
    /// A WebSocket handshake the route takes: it goes upstream with `Upgrade: websocket`.
    case websocket
    /// An upgrade the route or the request's form does not allow: this `400`.
    case refused(GatewayError)

    /// What `head` asks on a route, with a browser's token subprotocol (``WebSocketTokenProtocol``)
    /// taken out into its `Authorization` on a bearer route.
    /// An upgrade needs an `Upgrade` field: a head without one (nearly every request) is told
    /// from its bytes, any other read as NIO's head and laid out again if the token moved.
    package static func of(_ head: inout ClientRequestHead, websocketRoute: Bool, bearerRoute: Bool) -> WebSocketHandshake {
        guard head.contains("upgrade") else { return .none }
        let original = head.requestHead
        var fields = original
        let handshake = of(&fields, websocketRoute: websocketRoute, bearerRoute: bearerRoute)
        if fields != original { head = ClientRequestHead(fields) }
        return handshake
    }

    package static func of(_ head: inout HTTPRequestHead, websocketRoute: Bool, bearerRoute: Bool) -> WebSocketHandshake {
        let handshake = of(head, websocketRoute: websocketRoute)
        guard handshake == .websocket else { return handshake }
        if let refusal = WebSocketTokenProtocol.apply(to: &head, bearerRoute: bearerRoute) { return .refused(refusal) }
        return handshake
    }

    package static func of(_ head: HTTPRequestHead, websocketRoute: Bool) -> WebSocketHandshake {
        var connectionNamesUpgrade = false
        var upgrade: String?
        for (name, value) in head.headers {
            if HeaderName.equals(name, "connection") {
                if value.split(separator: ",").contains(where: { HeaderName.equals($0.trimmingCharacters(), "upgrade") }) {
                    connectionNamesUpgrade = true
                }
            } else if HeaderName.equals(name, "upgrade") {
                upgrade = value
            }
        }
        guard connectionNamesUpgrade, let upgrade else { return .none }
        guard websocketRoute else {
            return .refused(.invalidRequest("this route does not accept protocol upgrades"))
        }
        guard HeaderName.equals(upgrade.trimmingCharacters(), "websocket"), head.method == .GET, head.version == .http1_1 else {
            return .refused(.invalidRequest("only a WebSocket handshake (GET, HTTP/1.1, Upgrade: websocket) may upgrade"))
        }
        return .websocket
    }
}

extension StringProtocol {
    /// Without spaces and tabs around it, as a `String`.
    fileprivate func trimmingCharacters() -> String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }
}

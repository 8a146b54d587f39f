import GatewayPrimitives
import NIOHTTP1

/// The rules every request head passes before anything routes it: the proxy engine,
/// Hummingbird's router, the proxy's route table and `strip_prefix` all see only what this
/// lets through, on every listener. ``RequestEdge`` applies them to each head.
///
/// Kept apart from the proxy engines so each rule exists once, whichever engine forwards:
/// - the target's path is made canonical (``RequestPath``): routes match, and upstreams
///   receive, the path an upstream framework would resolve, never a raw one that could
///   slip under an open route;
/// - it names one host: an HTTP/1.1 request without `Host`, or with two or a malformed one,
///   is refused (RFC 9112 §3.2);
/// - a request carries at most one credential: two `Authorization` or two `X-API-Key`
///   fields are refused rather than one of them picked (which one a component picks differs:
///   the first, the last, or both joined);
/// - its framing is unambiguous: `Connection` may not name `Content-Length`,
///   `Transfer-Encoding` or `Host` (no client has a reason to, and a proxy that honoured it
///   would drop the field that frames or routes the request), and the only transfer coding
///   is `chunked`. The upstream's framing is the gateway's own either way
///   (``UpstreamRequestFraming``): this refuses the probe instead of quietly mending it;
/// - a request that asks to switch protocols is never followed by another HTTP request on
///   its connection (the parser stops there): the proxy engine refuses it, or upgrades it on a
///   WebSocket route (``WebSocketHandshake``), and the connection closes after it.
package enum RequestHeadRules {
    /// `head` as it goes on (its target canonical, `Host` set from an absolute-form target),
    /// or the `400 INVALID_REQUEST` that refuses it. Below `anchoredPrefix`
    /// (``ProxiedPaths/anchoredPrefix``) the rest of the path is made canonical on its own.
    package static func admit(_ head: ClientRequestHead, anchoredPrefix: String? = nil) -> Result<ClientRequestHead, GatewayError> {
        let fields = inspect(head)
        if let refusal = fields.refusal {
            return .failure(.invalidRequest(refusal))
        }
        var admitted = head
        switch normalize(target: head.target, anchoredPrefix: anchoredPrefix) {
        case .unchanged:
            break
        case .rewritten(let target, let host):
            if let host {
                var rewritten = head.requestHead
                rewritten.uri = target
                rewritten.headers.replaceOrAdd(name: "Host", value: host)
                admitted = ClientRequestHead(rewritten)
            } else {
                admitted = head.with(target: target)
            }
        case .refused(let refusal):
            return .failure(.invalidRequest(refusal.description))
        }
        if fields.asksUpgrade || head.method == .CONNECT {
            // The request parser reads nothing more after a request that asks to switch
            // protocols (llhttp's rule): the gateway answers it as an ordinary request, then closes,
            // so nothing pipelined behind it waits for good. Rare: the head is laid out again.
            var closing = admitted.requestHead
            closing.headers.add(name: "Connection", value: "close")
            admitted = ClientRequestHead(closing)
        }
        return .success(admitted)
    }

    /// ``RequestPath/normalize(target:)``, except that a target under `anchoredPrefix` keeps
    /// the prefix and has the rest made canonical alone: `/forward/../healthz` is refused as
    /// climbing above the root, as `/../healthz` would be, never read as `/healthz`.
    static func normalize(target: String, anchoredPrefix: String?) -> RequestPath.Target {
        let whole = RequestPath.normalize(target: target)
        guard case .rewritten = whole, let anchoredPrefix, target.hasPrefix(anchoredPrefix) else { return whole }
        let rest = target.dropFirst(anchoredPrefix.count)
        guard rest.utf8.first == UInt8(ascii: "/") else { return whole }
        switch RequestPath.normalize(target: String(rest)) {
        case .unchanged: return .rewritten(target, host: nil)
        case .rewritten(let canonical, _): return .rewritten(anchoredPrefix + canonical, host: nil)
        case .refused(let refusal): return .refused(refusal)
        }
    }

    /// Why the head's fields are refused, if they are (a repeated credential, or framing
    /// fields that are not unambiguous), and whether it asks to switch protocols (`Connection`
    /// names `upgrade` and an `Upgrade` field is there). One pass over the names' bytes, no
    /// allocation unless a refusal is written.
    private static func inspect(_ head: ClientRequestHead) -> (refusal: String?, asksUpgrade: Bool) {
        var authorizations = 0
        var apiKeys = 0
        var hosts = 0
        var connectionNamesUpgrade = false
        var hasUpgrade = false
        var refusal: String?
        head.forEachField { field in
            guard refusal == nil else { return }
            let name = field.name
            if HeaderName.equals(name, HeaderName.authorization.lowercaseBytes) {
                authorizations += 1
            } else if HeaderName.equals(name, HeaderName.apiKey.lowercaseBytes) {
                apiKeys += 1
            } else if HeaderName.equals(name, "connection") {
                HTTP1Syntax.forEachElement(ofList: field.value) { token in
                    if let named = protectedFromConnection.first(where: { HeaderName.equals(token, $0.lowercase) }) {
                        refusal = refusal ?? "Connection may not name \(named.name)"
                    }
                    if HeaderName.equals(token, "upgrade") { connectionNamesUpgrade = true }
                }
            } else if HeaderName.equals(name, "transfer-encoding") {
                if !HeaderName.equals(field.value.trimmingWhiteSpace, "chunked") {
                    refusal = "Transfer-Encoding other than chunked is not accepted"
                }
            } else if HeaderName.equals(name, "upgrade") {
                hasUpgrade = true
            } else if HeaderName.equals(name, "host") {
                hosts += 1
                if !isHost(field.value) { refusal = "the Host header is not a host and port" }
            }
        }
        if let refusal { return (refusal, false) }
        if authorizations > 1 { return ("more than one Authorization header", false) }
        if apiKeys > 1 { return ("more than one X-API-Key header", false) }
        // RFC 9112 §3.2: which host the request is for must be plain.
        if hosts > 1 { return ("more than one Host header", false) }
        // An absolute-form target names its host itself (and replaces `Host` in `admit`).
        if hosts == 0 && head.version == .http1_1 && (head.target.utf8.first == UInt8(ascii: "/") || head.target == "*") {
            return ("an HTTP/1.1 request needs a Host header", false)
        }
        return (nil, connectionNamesUpgrade && hasUpgrade)
    }

    /// Whether `value` can be a `Host` (RFC 9110 §7.2: `uri-host [":" port]`, or empty): a
    /// space, `/`, `@` or `\` in it would become a different authority to another reader.
    private static func isHost(_ value: UnsafeRawBufferPointer) -> Bool {
        value.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "%"), UInt8(ascii: ":"),
                UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"),
                UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
                UInt8(ascii: "="): true
            default: false
            }
        }
    }

    /// The fields that frame or route a request, which `Connection` may not name.
    private static let protectedFromConnection: [(name: String, lowercase: StaticString)] = [
        (name: "Content-Length", lowercase: "content-length"),
        (name: "Transfer-Encoding", lowercase: "transfer-encoding"),
        (name: "Host", lowercase: "host"),
    ]
}

import GatewayAdmission
import GatewayEdge
import GatewayPrimitives
import HTTPTypes
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// The header rules for what goes to an upstream and what comes back (docs/security-model.md,
/// "What never happens"; docs/DECISIONS.md, "Proxy headers: Forwarded, X-Real-IP and underscores").
///
/// They compare names without allocating: they run on every proxied request. A request's
/// fields are the bytes of the client's head (``ClientRequestHead``), whose kept lines the
/// upstream head's bytes copy as they are (``UpstreamRequestHead``); a response's are the bytes of the
/// upstream's head (``UpstreamResponseHead``), whose lines an HTTP/1.1 client's head copies as
/// they are (``ClientResponseHead``).
package enum ForwardedHeaders {
    /// The request headers for the upstream, written into `head`: every `X-Gateway-*` and
    /// hop-by-hop field removed (including those the client listed in `Connection`), every
    /// field whose name holds an `_`, `Authorization` and the routing and identity fields
    /// (``HeaderName/routingAndIdentityFields``) removed unless the route forwards them,
    /// `Forwarded` and `X-Real-IP` removed unless a trusted proxy sent them, then the route's
    /// `request_headers` (``ProxyRoute/droppedHeaders`` removed, ``ProxyRoute/addedHeaders``
    /// set: never a field of the gateway's, refused at load), then the gateway's own identity
    /// and forwarding headers set, then `trace` (the trace context the gateway sends,
    /// ``ExchangeTrace``), which replaces the client's `traceparent` and `tracestate`.
    ///
    /// Underscores: many frameworks (CGI, WSGI, Rack, PHP) map `-` and `_` to the same name,
    /// so `X-Gateway_User-Id` would read as the identity header the gateway vouches for.
    /// nginx drops such fields by default (`underscores_in_headers off`); so does the gateway.
    /// `Forwarded` (RFC 7239) and `X-Real-IP` are what frameworks trust for the client's
    /// address, scheme and host, so they follow the `X-Forwarded-For` rule.
    ///
    /// Compared as the head's bytes, and each field kept goes into `head` as the line it came
    /// as: an HTTP/1.1 client's bytes, an HTTP/2 stream's fields laid out the same way
    /// (``ClientRequestHead``); no `String` per field.
    package static func request(
        from incoming: ClientRequestHead,
        route: ProxyRoute,
        identity: ProxyIdentity,
        requestID: String,
        client: ClientAddress.Forwarding,
        trace: [(name: String, value: String)]?,
        upstreamAuthority: String? = nil,
        into head: inout UpstreamRequestHead
    ) {
        let connectionListed = listedInConnection(incoming)
        head.add(name: "Host", value: upstreamAuthority ?? route.upstreamAuthority)
        var host: String?
        incoming.forEachField { field in
            let name = field.name
            if HeaderName.hasPrefix(name, HeaderName.gatewayPrefixBytes) || HeaderName.isHopByHop(name) { return }
            if name.contains(UInt8(ascii: "_")) { return }
            // httpoxy: CGI turns a `Proxy` field into `HTTP_PROXY`, which HTTP clients upstream obey.
            if HeaderName.equals(name, "proxy") { return }
            if !connectionListed.isEmpty && connectionListed.contains(where: { HeaderName.equals(name, $0) }) { return }
            if let routing = HeaderName.routingOrIdentityField(name) {
                if route.forwardHeaders.contains(routing) { head.add(line: field.line) }
                return
            }
            // `Forwarded`, `X-Real-IP` and `X-Forwarded-*` (`-Port`, `-Ssl`, ...): frameworks take
            // them for who the client is and how it connected, so only a trusted proxy's pass.
            if !client.fromTrustedProxy && (HeaderName.hasPrefix(name, HeaderName.forwardedPrefixBytes)
                || HeaderName.equals(name, HeaderName.forwarded.lowercaseBytes) || HeaderName.equals(name, HeaderName.realIP.lowercaseBytes)) { return }
            if HeaderName.equals(name, HeaderName.authorization.lowercaseBytes) {
                if route.forwardAuthorization { head.add(line: field.line) }
                return
            }
            // Partners' live keys stay at the gateway like `Authorization` (forward_api_key).
            if HeaderName.equals(name, HeaderName.apiKey.lowercaseBytes) {
                if route.forwardAPIKey { head.add(line: field.line) }
                return
            }
            // The client's `Host` goes on as `X-Forwarded-Host`; the upstream's is the route's.
            if host == nil && HeaderName.equals(name, "host") { host = field.valueString }
            // Set by the gateway below or by the framing (``UpstreamRequestFraming``: no copy of
            // the client's `Content-Length`, one, two or one named in `Connection`, ever goes
            // along); Expect: the gateway answered 100-continue itself (HTTP1ConnectionHandler).
            if HeaderName.isSetByGateway(name) { return }
            if trace != nil && (HeaderName.equals(name, HeaderName.traceparent.lowercaseBytes) || HeaderName.equals(name, HeaderName.tracestate.lowercaseBytes)) { return }
            // The route's own rule (`request_headers`), after the gateway's: the names it removes
            // and those it adds, which replace the client's.
            if !route.droppedHeaders.isEmpty && route.droppedHeaders.contains(where: { HeaderName.equals(name, $0) }) { return }
            // The web session's refresh token is the gateway's alone, like `Authorization`.
            if HeaderName.equals(name, "cookie") {
                if let kept = RefreshCookie.removed(from: field.valueString) { head.add(name: String(decoding: name, as: UTF8.self), value: kept) }
                return
            }
            head.add(line: field.line)
        }
        for field in route.addedHeaders { head.add(name: field.name, value: field.value) }
        identity.addHeaders(to: &head)
        head.add(name: HeaderName.requestID.name, value: requestID)
        if let forwardedFor = client.forwardedFor {
            head.add(name: HeaderName.forwardedFor.name, value: forwardedFor)
        }
        if !client.fromTrustedProxy, let peerIP = client.peerIP {
            head.add(name: HeaderName.realIP.name, value: peerIP)
        }
        head.add(name: HeaderName.forwardedProto.name, value: route.clientScheme)
        if let host { head.add(name: HeaderName.forwardedHost.name, value: host) }
        for field in trace ?? [] { head.add(name: field.name, value: field.value) }
    }

    /// The upstream's response fields for the client, handed to `writer` one by one:
    /// hop-by-hop fields (and those the upstream listed in `Connection`) and any `Set-Cookie`
    /// of the gateway's own cookies (``GatewayCookies``) removed,
    /// `X-Request-Id` set to the gateway's when one is given, then `extra` (the gateway's own
    /// fields, such as `RateLimit-*`), then `cors` (``CORSPolicy``), which replaces every
    /// `Access-Control-*` field of the upstream's.
    ///
    /// Written rather than returned, and compared as the head's bytes: an HTTP/1.1 answer copies
    /// each field line kept straight into its head's bytes (``ClientResponseHead``), an HTTP/2
    /// one makes its header block (``ProxyResponseHead``); neither needs an `HTTPHeaders` or a
    /// `String` per field in between.
    package static func response<Writer: ResponseFieldWriter>(
        from upstream: UpstreamResponseHead,
        requestID: String?,
        adding extra: HTTPFields = [:],
        cors: [(name: String, value: String)]? = nil,
        into writer: inout Writer
    ) {
        // A `Connection` naming fields is rare: only then is each field looked for in it.
        var connectionLists = false
        upstream.forEachField { field in
            guard HeaderName.equals(field.name, "connection") else { return }
            forEachListedName(in: field.value) { _ in connectionLists = true }
        }
        upstream.forEachField { field in
            let name = field.name
            if HeaderName.isHopByHop(name) { return }
            if cors != nil && CORSPolicy.isCORSField(name) { return }
            if connectionLists && isListedInConnection(name, of: upstream) { return }
            if requestID != nil && HeaderName.equals(name, HeaderName.requestID.lowercaseBytes) { return }
            // The gateway's cookies are its own: an upstream's would shadow or plant them.
            if HeaderName.equals(name, "set-cookie") && GatewayCookies.isSet(by: field.value) { return }
            writer.pass(name: name, value: field.value, line: field.line)
        }
        if let requestID { writer.add(name: HeaderName.requestID.name, value: requestID) }
        for field in extra { writer.add(name: field.name.rawName, value: field.value) }
        for field in cors ?? [] { writer.add(name: field.name, value: field.value) }
    }

    /// Trailers for a client served through Hummingbird: what HTTPTypes accepts (all of a
    /// well-formed upstream's).
    package static func trailers(from upstream: HTTPHeaders) -> HTTPFields {
        HTTPFields(upstream, splitCookie: false)
    }

    /// The field names a client's `Connection` lists besides `close` and `keep-alive` (which are
    /// hop-by-hop anyway), lowercased. Usually none, and then nothing is allocated.
    private static func listedInConnection(_ head: ClientRequestHead) -> [String] {
        var listed: [String] = []
        head.forEachField { field in
            guard HeaderName.equals(field.name, "connection") else { return }
            forEachListedName(in: field.value) { listed.append(String(decoding: $0, as: UTF8.self).lowercased()) }
        }
        return listed
    }

    /// Whether an upstream's `Connection` names `name`.
    private static func isListedInConnection(_ name: UnsafeRawBufferPointer, of upstream: UpstreamResponseHead) -> Bool {
        var listed = false
        upstream.forEachField { field in
            guard !listed, HeaderName.equals(field.name, "connection") else { return }
            forEachListedName(in: field.value) { if HeaderName.equals(name, anyCase: $0) { listed = true } }
        }
        return listed
    }

    /// Each name a `Connection` value lists, but hop-by-hop ones.
    private static func forEachListedName(in value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        HTTP1Syntax.forEachElement(ofList: value) { name in
            if !HeaderName.isHopByHop(name) { body(name) }
        }
    }
}

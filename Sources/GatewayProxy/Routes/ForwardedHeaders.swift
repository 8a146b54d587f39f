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
/// fields are NIO's `HTTPHeaders` (what the request parser hands on), written straight into the
/// upstream head's bytes (``UpstreamRequestHead``); a response's are the bytes of the
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
    package static func request(
        from incoming: HTTPHeaders,
        route: ProxyRoute,
        identity: ProxyIdentity,
        requestID: String,
        client: ClientAddress.Forwarding,
        host: String?,
        trace: [(name: String, value: String)]?,
        upstreamAuthority: String? = nil,
        into head: inout UpstreamRequestHead
    ) {
        let connectionListed = listedInConnection(incoming)
        head.add(name: "Host", value: upstreamAuthority ?? route.upstreamAuthority)
        for (name, value) in incoming {
            if HeaderName.hasPrefix(name, HeaderName.gatewayPrefix) || HeaderName.isHopByHop(name) { continue }
            if name.utf8.contains(UInt8(ascii: "_")) { continue }
            if !client.fromTrustedProxy && (HeaderName.equals(name, HeaderName.forwarded.lowercase) || HeaderName.equals(name, HeaderName.realIP.lowercase)) { continue }
            if !connectionListed.isEmpty && connectionListed.contains(where: { HeaderName.equals(name, $0) }) { continue }
            if let field = HeaderName.routingOrIdentityField(name) {
                if route.forwardHeaders.contains(field) { head.add(name: name, value: value) }
                continue
            }
            if HeaderName.equals(name, HeaderName.authorization.lowercase) {
                if route.forwardAuthorization { head.add(name: name, value: value) }
                continue
            }
            // Partners' live keys stay at the gateway like `Authorization` (forward_api_key).
            if HeaderName.equals(name, HeaderName.apiKey.lowercase) {
                if route.forwardAPIKey { head.add(name: name, value: value) }
                continue
            }
            // Set by the gateway below or by the framing (``UpstreamRequestFraming``: no copy of
            // the client's `Content-Length`, one, two or one named in `Connection`, ever goes
            // along); Expect: the gateway answered 100-continue itself (HTTP1ConnectionHandler).
            if HeaderName.setByGateway.contains(where: { HeaderName.equals(name, $0) }) { continue }
            if trace != nil && (HeaderName.equals(name, HeaderName.traceparent.lowercase) || HeaderName.equals(name, HeaderName.tracestate.lowercase)) { continue }
            // The route's own rule (`request_headers`), after the gateway's: the names it removes
            // and those it adds, which replace the client's.
            if !route.droppedHeaders.isEmpty && route.droppedHeaders.contains(where: { HeaderName.equals(name, $0) }) { continue }
            // The web session's refresh token is the gateway's alone, like `Authorization`.
            if HeaderName.equals(name, "cookie") {
                if let kept = RefreshCookie.removed(from: value) { head.add(name: name, value: kept) }
                continue
            }
            head.add(name: name, value: value)
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
    /// of the refresh cookie (``RefreshCookie``) removed,
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
            // The refresh cookie is the gateway's: an upstream's would shadow or plant it.
            if HeaderName.equals(name, "set-cookie") && RefreshCookie.isSet(by: field.value) { return }
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
    private static func listedInConnection(_ headers: HTTPHeaders) -> [String] {
        var listed: [String] = []
        for (name, value) in headers where HeaderName.equals(name, "connection") {
            var value = value
            value.withUTF8 { value in
                forEachListedName(in: UnsafeRawBufferPointer(value)) { listed.append(String(decoding: $0, as: UTF8.self).lowercased()) }
            }
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

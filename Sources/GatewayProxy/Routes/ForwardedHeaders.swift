import GatewayAdmission
import GatewayEdge
import GatewayPrimitives
import HTTPTypes
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// The header rules for what goes to an upstream and what comes back (docs/security-model.md,
/// "What never happens"; docs/DECISIONS.md, "Proxy headers: Forwarded, X-Real-IP and underscores").
///
/// They read NIO's `HTTPHeaders`, the form the proxy engine receives, and compare names
/// without allocating: they run on every proxied request. The upstream's request fields are
/// written straight into its head's bytes (``UpstreamRequestHead``), and so are the client's
/// answer fields over HTTP/1.1 (``ClientResponseHead``). Where an `HTTPHeaders` is still wanted
/// they are gathered in an array and wrapped once: `HTTPHeaders.add` checks every name it is
/// given for non-ASCII bytes and for `Connection`, which fields parsed by NIO or set by the
/// gateway do not need.
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

    /// The upstream's response headers for the client, handed to `visit` one by one:
    /// hop-by-hop fields (and those the upstream listed in `Connection`) and any `Set-Cookie`
    /// of the refresh cookie (``RefreshCookie``) removed,
    /// `X-Request-Id` set to the gateway's when one is given, then `extra` (the gateway's own
    /// fields, such as `RateLimit-*`), then `cors` (``CORSPolicy``), which replaces every
    /// `Access-Control-*` field of the upstream's.
    ///
    /// Visited rather than returned: an HTTP/1.1 answer writes them straight into its head's
    /// bytes (``ClientResponseHead``), an HTTP/2 one into its header block (``ProxyResponseHead``);
    /// neither needs an `HTTPHeaders` in between.
    package static func response(
        from upstream: HTTPHeaders,
        requestID: String?,
        adding extra: HTTPFields = [:],
        cors: [(name: String, value: String)]? = nil,
        _ visit: (_ name: String, _ value: String) -> Void
    ) {
        let connectionListed = listedInConnection(upstream)
        for (name, value) in upstream {
            if HeaderName.isHopByHop(name) { continue }
            if cors != nil && CORSPolicy.isCORSField(name) { continue }
            if !connectionListed.isEmpty && connectionListed.contains(where: { HeaderName.equals(name, $0) }) { continue }
            if requestID != nil && HeaderName.equals(name, HeaderName.requestID.lowercase) { continue }
            // The refresh cookie is the gateway's: an upstream's would shadow or plant it.
            if HeaderName.equals(name, "set-cookie") && RefreshCookie.isSet(by: value) { continue }
            visit(name, value)
        }
        if let requestID { visit(HeaderName.requestID.name, requestID) }
        for field in extra { visit(field.name.rawName, field.value) }
        for field in cors ?? [] { visit(field.name, field.value) }
    }

    /// ``response(from:requestID:adding:cors:_:)`` gathered into NIO's form.
    package static func response(
        from upstream: HTTPHeaders, requestID: String?, adding extra: HTTPFields = [:], cors: [(name: String, value: String)]? = nil
    ) -> HTTPHeaders {
        var outgoing: [(String, String)] = []
        outgoing.reserveCapacity(upstream.count + 1 + extra.count)
        response(from: upstream, requestID: requestID, adding: extra, cors: cors) { outgoing.append(($0, $1)) }
        return HTTPHeaders(outgoing)
    }

    /// ``response(from:requestID:)`` as HTTPTypes fields, for responses sent through
    /// Hummingbird (which sets `X-Request-Id` itself).
    package static func responseFields(from upstream: HTTPHeaders) -> HTTPFields {
        HTTPFields(response(from: upstream, requestID: nil), splitCookie: false)
    }

    /// Trailers for a client served through Hummingbird: what HTTPTypes accepts (all of a
    /// well-formed upstream's).
    package static func trailers(from upstream: HTTPHeaders) -> HTTPFields {
        HTTPFields(upstream, splitCookie: false)
    }

    /// The field names a `Connection` header lists besides `close` and `keep-alive` (which are
    /// hop-by-hop anyway), lowercased. Usually none, and then nothing is allocated.
    private static func listedInConnection(_ headers: HTTPHeaders) -> [String] {
        var listed: [String] = []
        for (name, value) in headers where HeaderName.equals(name, "connection") {
            let bytes = value.utf8
            var tokenStart = bytes.startIndex
            while tokenStart < bytes.endIndex {
                let tokenEnd = bytes[tokenStart...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
                let token = String(decoding: trimmed(bytes[tokenStart..<tokenEnd]), as: UTF8.self)
                if !token.isEmpty && !HeaderName.isHopByHop(token) { listed.append(token.lowercased()) }
                tokenStart = tokenEnd < bytes.endIndex ? bytes.index(after: tokenEnd) : tokenEnd
            }
        }
        return listed
    }

    private static func trimmed(_ bytes: Substring.UTF8View) -> Substring.UTF8View {
        var bytes = bytes
        while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { bytes = bytes.dropLast() }
        return bytes
    }
}

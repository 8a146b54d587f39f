/// Case-insensitive header-name comparisons that neither allocate nor lowercase a copy: the
/// proxy's header rules run them for every field of every proxied request and response.
package enum HeaderName {
    /// Whether `name` is a hop-by-hop field: RFC 9110 §7.6.1's, plus the de-facto ones proxies
    /// drop. Told by length first: most fields have none of these lengths and are passed
    /// without a comparison (this runs for every field of every proxied request and response).
    package static func isHopByHop(_ name: String) -> Bool {
        name.utf8.withContiguousStorageIfAvailable { isHopByHop(UnsafeRawBufferPointer($0)) } ?? isHopByHop(Array(name.utf8))
    }

    /// The same over a name's bytes (a field of an upstream's head, where it lies).
    package static func isHopByHop(_ name: UnsafeRawBufferPointer) -> Bool {
        switch name.count {
        case 2: equals(name, "te")
        case 7: equals(name, "trailer") || equals(name, "upgrade")
        case 10: equals(name, "connection") || equals(name, "keep-alive")
        case 16: equals(name, "proxy-connection")
        case 17: equals(name, "transfer-encoding")
        case 18: equals(name, "proxy-authenticate")
        case 19: equals(name, "proxy-authorization")
        default: false
        }
    }

    private static func isHopByHop(_ name: [UInt8]) -> Bool {
        name.withUnsafeBytes { isHopByHop($0) }
    }

    /// Fields frameworks read as the request's real path or method (`X-Original-URL` in IIS
    /// and Symfony, `X-HTTP-Method-Override` in Express and Rails) or as the signed-in user
    /// (`X-Forwarded-User` from oauth2-proxy, `X-Remote-User` in Django): a client's own would
    /// re-route the request past the route's rules or name a user. Routes drop them unless
    /// they opt in (`forward_headers`). Lowercase.
    package static let routingAndIdentityFields = routingAndIdentityFieldsBytes.map(\.description)
    /// ``routingAndIdentityFields`` as the bytes the binary holds, for names read as bytes.
    private static let routingAndIdentityFieldsBytes: [StaticString] = [
        "x-original-url", "x-rewrite-url", "x-forwarded-prefix", "x-http-method-override", "x-method-override",
        "x-forwarded-user", "x-forwarded-email", "x-remote-user",
    ]

    /// The entry of ``routingAndIdentityFields`` `name` is, if any; told by length first, like
    /// ``isHopByHop(_:)``.
    package static func routingOrIdentityField(_ name: String) -> String? {
        name.utf8.withContiguousStorageIfAvailable { routingOrIdentityField(UnsafeRawBufferPointer($0)) }
            ?? Array(name.utf8).withUnsafeBytes { routingOrIdentityField($0) }
    }

    /// The same over a name's bytes (a field of a client's head, where it lies).
    package static func routingOrIdentityField(_ name: UnsafeRawBufferPointer) -> String? {
        switch name.count {
        case 13, 14, 16, 17, 18, 22: routingAndIdentityFieldsBytes.firstIndex(where: { equals(name, $0) }).map { routingAndIdentityFields[$0] }
        default: nil
        }
    }

    // MARK: The fields the gateway owns

    /// A field name as the gateway writes it (`name`; HTTP/1.1 keeps its case) and in
    /// lowercase, which ``equals(_:_:)`` and ``hasPrefix(_:_:)`` compare with and HTTP/2 sends.
    package struct Field: Sendable {
        package let name: String
        package let lowercase: String
        /// `lowercase` as the bytes the binary holds, to compare names read as bytes with.
        package let lowercaseBytes: StaticString

        init(_ name: StaticString, _ lowercase: StaticString) {
            self.name = name.description
            self.lowercase = lowercase.description
            lowercaseBytes = lowercase
        }
    }

    /// A driver's access token (`Bearer ...`), on bearer routes and the gateway's own endpoints.
    package static let authorization = Field("Authorization", "authorization")
    /// A partner's key, on `api_key` routes and the SDK token mint.
    package static let apiKey = Field("X-API-Key", "x-api-key")
    /// The request's id: a sane one of the client's is kept, else one is drawn; sent upstream and
    /// answered.
    package static let requestID = Field("X-Request-Id", "x-request-id")
    /// The client's address and the proxies it came through, as upstreams are told them (and as
    /// trusted proxies tell the gateway).
    package static let forwardedFor = Field("X-Forwarded-For", "x-forwarded-for")
    package static let forwardedProto = Field("X-Forwarded-Proto", "x-forwarded-proto")
    package static let forwardedHost = Field("X-Forwarded-Host", "x-forwarded-host")
    package static let realIP = Field("X-Real-IP", "x-real-ip")
    /// RFC 7239's field: dropped unless the client is a trusted proxy, never written.
    package static let forwarded = Field("Forwarded", "forwarded")
    /// W3C trace context, continued or started by the gateway's spans.
    package static let traceparent = Field("traceparent", "traceparent")
    package static let tracestate = Field("tracestate", "tracestate")

    /// The start of every field that tells an upstream who the caller is: the gateway sets
    /// them and drops any a client sends. Lowercase.
    package static let gatewayPrefix = gatewayPrefixBytes.description
    /// ``gatewayPrefix`` as the bytes the binary holds, to compare names read as bytes with.
    package static let gatewayPrefixBytes: StaticString = "x-gateway-"
    /// The prefix of the fields that tell the client's address, scheme, host or port
    /// (`X-Forwarded-*`): believed only from `trusted_proxies`.
    package static let forwardedPrefixBytes: StaticString = "x-forwarded-"
    package static let gatewayUserID = Field("X-Gateway-User-Id", "x-gateway-user-id")
    package static let gatewayAuthChannel = Field("X-Gateway-Auth-Channel", "x-gateway-auth-channel")
    package static let gatewayPartnerID = Field("X-Gateway-Partner-Id", "x-gateway-partner-id")
    /// The partner's key a request came with (`key_...`, never the key), on `api_key` routes.
    package static let gatewayKeyID = Field("X-Gateway-Key-Id", "x-gateway-key-id")
    /// The signed assertion of the caller's identity (the JWKS verifies it).
    package static let gatewayAssertion = Field("X-Gateway-Assertion", "x-gateway-assertion")
    /// The signature of each delivery webhook call (`t=<unix seconds>,v1=<hex HMAC-SHA256>`).
    package static let gatewaySignature = Field("X-Gateway-Signature", "x-gateway-signature")
    /// A free-text note of who calls the admin API, kept in the audit trail; it decides nothing.
    package static let adminActor = Field("X-Admin-Actor", "x-admin-actor")

    /// Fields the gateway writes on every upstream request itself, whatever the client sent:
    /// the request id, `X-Forwarded-For`, `-Proto` and `-Host`, `Host`; `Expect`, which it
    /// answers itself; `Content-Length`, the body's framing being the gateway's, from what its
    /// parser measured. Lowercase.
    package static let setByGateway = setByGatewayBytes.map(\.description)
    /// ``setByGateway`` as the bytes the binary holds, for names read as bytes.
    package static let setByGatewayBytes: [StaticString] = [
        requestID.lowercaseBytes, forwardedFor.lowercaseBytes, forwardedProto.lowercaseBytes, forwardedHost.lowercaseBytes, "host", "expect",
        "content-length",
    ]

    /// Whether the gateway writes a field named `name` on every upstream request itself
    /// (``setByGateway``), for names read as bytes.
    package static func isSetByGateway(_ name: UnsafeRawBufferPointer) -> Bool {
        setByGatewayBytes.contains { equals(name, $0) }
    }

    /// Why `name` is the gateway's, or nil when it is not: one of the fields it owns
    /// (`X-Gateway-*`, ``setByGateway``, the client's address, the trace context), one of a
    /// connection (hop-by-hop, `Proxy-*`), or one only a rule of its own passes (credentials,
    /// ``routingAndIdentityFields``, names holding `_`). A route may neither add nor remove such
    /// a field (`request_headers`): the reason completes "`name` is ...".
    package static func gatewayRule(for name: String) -> String? {
        if hasPrefix(name, gatewayPrefix) {
            return "one of the X-Gateway-* fields, which tell upstreams who the caller is and are set by the gateway alone"
        }
        if isHopByHop(name) || hasPrefix(name, "proxy-") { return "a hop-by-hop field, of one connection, never forwarded" }
        if equals(name, "expect") { return "answered by the gateway itself (100-continue), never forwarded" }
        if setByGateway.contains(where: { equals(name, $0) }) { return "written by the gateway on every upstream request" }
        if routingOrIdentityField(name) != nil { return "a routing or identity field, which only forward_headers passes" }
        if hasPrefix(name, "x-forwarded-") || equals(name, forwarded.lowercase) || equals(name, realIP.lowercase) {
            return "the client's address, scheme or host, which the gateway tells upstreams itself (trusted_proxies)"
        }
        if equals(name, authorization.lowercase) { return "a credential, which only forward_authorization passes" }
        if equals(name, apiKey.lowercase) { return "a credential, which only forward_api_key passes" }
        if equals(name, traceparent.lowercase) || equals(name, tracestate.lowercase) { return "the trace context, which the gateway continues itself" }
        if name.utf8.contains(UInt8(ascii: "_")) { return "a name holding an _, which the gateway drops from every request (frameworks read it as -)" }
        return nil
    }

    /// Whether `name` equals `lowercase` (which must be lowercase ASCII) ignoring ASCII case.
    package static func equals(_ name: String, _ lowercase: String) -> Bool {
        name.utf8.count == lowercase.utf8.count && hasPrefix(name, lowercase)
    }

    /// Whether `name` starts with `lowercase` (which must be lowercase ASCII) ignoring ASCII case.
    package static func hasPrefix(_ name: String, _ lowercase: String) -> Bool {
        // Over the strings' bytes where they lie (always, for native strings): this runs on every
        // field of every proxied request, and the UTF-8 view's iterator is much slower per byte.
        let compared = name.utf8.withContiguousStorageIfAvailable { name in
            lowercase.utf8.withContiguousStorageIfAvailable { expected in
                hasPrefix(UnsafeRawBufferPointer(name), UnsafeRawBufferPointer(expected))
            }
        }
        if let compared = compared ?? nil { return compared }
        var candidate = name.utf8.makeIterator()
        for expected in lowercase.utf8 {
            guard let byte = candidate.next() else { return false }
            if folded(byte) != expected { return false }
        }
        return true
    }

    /// The same for a name (or a value) read as bytes, where they lie, against a lowercase name
    /// the code spells: its bytes are the binary's, no `String` is looked into.
    /// Inlinable: the length, compared first, tells most names apart without a call.
    @inlinable
    package static func equals(_ name: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        name.count == lowercase.utf8CodeUnitCount && hasPrefix(name, lowercase)
    }

    /// The same for a name (or a value) read as bytes, against a lowercase prefix the code spells.
    @inlinable
    package static func hasPrefix(_ name: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        hasPrefix(name, UnsafeRawBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount))
    }

    /// The same for a name read as bytes against a lowercase name held as a `String` (a
    /// route's, a name a `Connection` field lists).
    package static func equals(_ name: UnsafeRawBufferPointer, _ lowercase: String) -> Bool {
        guard name.count == lowercase.utf8.count else { return false }
        return lowercase.utf8.withContiguousStorageIfAvailable { hasPrefix(name, UnsafeRawBufferPointer($0)) }
            ?? Array(lowercase.utf8).withUnsafeBytes { hasPrefix(name, $0) }
    }

    /// Whether two names are the same ignoring ASCII case, whatever the case of either (a name
    /// an upstream's `Connection` lists, and a field's).
    package static func equals(_ name: UnsafeRawBufferPointer, anyCase other: UnsafeRawBufferPointer) -> Bool {
        guard name.count == other.count else { return false }
        for index in 0..<name.count where folded(name[index]) != folded(other[index]) {
            return false
        }
        return true
    }

    /// The comparison behind the others: whether `name` starts with `expected` (lowercase),
    /// ignoring ASCII case.
    @usableFromInline
    static func hasPrefix(_ name: UnsafeRawBufferPointer, _ expected: UnsafeRawBufferPointer) -> Bool {
        guard name.count >= expected.count else { return false }
        for index in 0..<expected.count where folded(name[index]) != expected[index] {
            return false
        }
        return true
    }

    /// `byte` in lowercase when it is an ASCII capital: ASCII letters differ from their
    /// lowercase form only in bit 0x20.
    private static func folded(_ byte: UInt8) -> UInt8 {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) ? byte | 0x20 : byte
    }
}

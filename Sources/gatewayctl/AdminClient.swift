import AsyncHTTPClient
import Foundation
import GatewayContract
import GatewayPrimitives
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// The admin API, one method per endpoint of docs/admin-api.md. The only code in gatewayctl
/// that speaks HTTP; every way a call can fail leaves here as a ``CtlError``.
struct AdminClient: Sendable {
    /// Scripts would rather fail than hang; 10 s is far above any admin call's normal time.
    static let timeout = TimeAmount.seconds(10)
    /// A thousand audit entries are well under this; anything bigger is not the admin API.
    static let maxResponseBytes = 16 * 1024 * 1024

    /// No trailing slash; may carry a path prefix (behind a reverse proxy).
    let baseURL: String
    let token: String
    /// `X-Admin-Actor`: recorded in the audit log next to the caller's address.
    let actor: String
    /// The connection pool the calls share, when a command makes many
    /// (``withSharedConnections(_:_:)``); nil: a client per call.
    private var shared: HTTPClient?

    init(baseURL: String, token: String, actor: String) {
        self.baseURL = baseURL
        self.token = token
        self.actor = actor
    }

    /// Runs `body` with calls that share one pool of up to `connections` keep-alive
    /// connections: partners as code makes thousands of calls, and a client per call would
    /// connect for each.
    func withSharedConnections<Result: Sendable>(_ connections: Int, _ body: (AdminClient) async throws -> Result) async throws -> Result {
        var configuration = Self.configuration
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        var client = self
        client.shared = http
        do {
            let result = try await body(client)
            try? await http.shutdown()
            return result
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    // MARK: Partners

    func createPartner(_ partner: NewPartner) async throws -> PartnerInfo {
        try await send(.POST, "/v1/partners", body: partner)
    }

    func partners(_ page: PageRequest) async throws -> Page<PartnerInfo> {
        try await send(.GET, "/v1/partners" + Self.query(page))
    }

    func partner(_ partnerID: String) async throws -> PartnerInfo {
        try await send(.GET, "/v1/partners/\(Self.segment(partnerID))")
    }

    func updatePartner(_ partnerID: String, _ update: PartnerUpdate) async throws -> PartnerInfo {
        try await send(.PATCH, "/v1/partners/\(Self.segment(partnerID))", body: update)
    }

    /// Only if the partner is still at `revision` (`If-Match`).
    func updatePartner(_ partnerID: String, _ update: PartnerUpdate, revision: Int) async throws -> PartnerInfo {
        try await send(.PATCH, "/v1/partners/\(Self.segment(partnerID))", bodyData: try AdminJSON.encoder().encode(update), revision: revision)
    }

    func disablePartner(_ partnerID: String) async throws -> PartnerInfo {
        try await send(.POST, "/v1/partners/\(Self.segment(partnerID))/disable")
    }

    func enablePartner(_ partnerID: String) async throws -> PartnerInfo {
        try await send(.POST, "/v1/partners/\(Self.segment(partnerID))/enable")
    }

    // MARK: Keys

    func createKey(partnerID: String, _ key: NewKey) async throws -> CreatedKey {
        try await send(.POST, "/v1/partners/\(Self.segment(partnerID))/keys", body: key)
    }

    func keys(partnerID: String, _ page: PageRequest) async throws -> Page<KeyInfo> {
        try await send(.GET, "/v1/partners/\(Self.segment(partnerID))/keys" + Self.query(page))
    }

    func key(_ keyID: String) async throws -> KeyInfo {
        try await send(.GET, "/v1/keys/\(Self.segment(keyID))")
    }

    func updateKey(_ keyID: String, _ update: KeyUpdate) async throws -> KeyInfo {
        try await send(.PATCH, "/v1/keys/\(Self.segment(keyID))", body: update)
    }

    /// Only if the key is still at `revision` (`If-Match`).
    func updateKey(_ keyID: String, _ update: KeyUpdate, revision: Int) async throws -> KeyInfo {
        try await send(.PATCH, "/v1/keys/\(Self.segment(keyID))", bodyData: try AdminJSON.encoder().encode(update), revision: revision)
    }

    /// Calls by outcome per day of one key (`key_...`) or a partner (`ptr_...`), `from` to `to`.
    func usage(of id: String, from: String, to: String) async throws -> UsageInfo {
        let owner = id.hasPrefix("ptr_") ? "partners" : "keys"
        var components = URLComponents()
        components.queryItems = [URLQueryItem(name: "from", value: from), URLQueryItem(name: "to", value: to)]
        return try await send(.GET, "/v1/\(owner)/\(Self.segment(id))/usage?" + (components.percentEncodedQuery ?? ""))
    }

    /// The presented key travels in the body, never in the URL.
    func findKey(_ lookup: KeyLookup) async throws -> KeyInfo {
        try await send(.POST, "/v1/keys/find", body: lookup)
    }

    func rotateKey(_ keyID: String, _ rotation: KeyRotation) async throws -> RotatedKey {
        try await send(.POST, "/v1/keys/\(Self.segment(keyID))/rotate", body: rotation)
    }

    func revokeKey(_ keyID: String) async throws -> RevokedKey {
        try await send(.POST, "/v1/keys/\(Self.segment(keyID))/revoke")
    }

    /// Only if the key is still at `revision` (`If-Match`).
    func revokeKey(_ keyID: String, revision: Int) async throws -> RevokedKey {
        try await send(.POST, "/v1/keys/\(Self.segment(keyID))/revoke", bodyData: nil, revision: revision)
    }

    // MARK: Members

    func createMember(partnerID: String, _ member: NewMember) async throws -> MemberInfo {
        try await send(.POST, "/v1/partners/\(Self.segment(partnerID))/members", body: member)
    }

    func members(partnerID: String, _ page: PageRequest) async throws -> Page<MemberInfo> {
        try await send(.GET, "/v1/partners/\(Self.segment(partnerID))/members" + Self.query(page))
    }

    /// The partner's member `memberID`, found by walking the list (the API has no read of one
    /// member: a partner's are few).
    func member(partnerID: String, _ memberID: String) async throws -> MemberInfo {
        var after: String?
        repeat {
            let page = try await members(partnerID: partnerID, try PageRequest(limit: String(PageRequest.maximumLimit), after: after, defaultLimit: 1))
            if let found = page.items.first(where: { $0.memberID == memberID }) { return found }
            after = page.nextCursor
        } while after != nil
        throw CtlError.refused(code: "NOT_FOUND", message: "no member \(memberID) of partner \(partnerID)")
    }

    func updateMember(partnerID: String, _ memberID: String, _ update: MemberUpdate) async throws -> MemberInfo {
        try await send(.PATCH, "/v1/partners/\(Self.segment(partnerID))/members/\(Self.segment(memberID))", body: update)
    }

    /// Only if the member is still at `revision` (`If-Match`).
    func updateMember(partnerID: String, _ memberID: String, _ update: MemberUpdate, revision: Int) async throws -> MemberInfo {
        try await send(
            .PATCH, "/v1/partners/\(Self.segment(partnerID))/members/\(Self.segment(memberID))", bodyData: try AdminJSON.encoder().encode(update),
            revision: revision
        )
    }

    func removeMember(partnerID: String, _ memberID: String) async throws {
        let _: NoContent = try await send(.DELETE, "/v1/partners/\(Self.segment(partnerID))/members/\(Self.segment(memberID))")
    }

    /// Only if the member is still at `revision` (`If-Match`).
    func removeMember(partnerID: String, _ memberID: String, revision: Int) async throws {
        let _: NoContent = try await send(.DELETE, "/v1/partners/\(Self.segment(partnerID))/members/\(Self.segment(memberID))", bodyData: nil, revision: revision)
    }

    // MARK: Sessions and audit

    func revokeSessions(userID: String) async throws -> SessionRevocation {
        try await send(.POST, "/v1/users/\(Self.segment(userID))/revoke-sessions")
    }

    func findUser(phone: String) async throws -> FoundUser {
        try await send(.POST, "/v1/users/find", body: PhoneQuery(phone: phone))
    }

    func sessions(userID: String, _ page: PageRequest) async throws -> Page<LoginSession> {
        try await send(.GET, "/v1/users/\(Self.segment(userID))/sessions" + Self.query(page))
    }

    func revokeSession(userID: String, sessionID: String) async throws -> RevokedSession {
        try await send(.POST, "/v1/users/\(Self.segment(userID))/sessions/\(Self.segment(sessionID))/revoke")
    }

    func eraseUser(_ userID: String) async throws -> ErasedUser {
        try await send(.POST, "/v1/users/\(Self.segment(userID))/erase")
    }

    func audit(_ page: PageRequest, trail: AuditTrailOptions.Trail = .actions) async throws -> Page<AuditEntry> {
        try await send(.GET, "/v1/audit" + Self.query(page, extra: [URLQueryItem(name: "trail", value: trail.rawValue)]))
    }

    /// Oldest first, within `from` (included) to `to` (excluded): what export and verify walk.
    func auditOldestFirst(_ page: PageRequest, from: Date?, to: Date?, trail: AuditTrailOptions.Trail = .actions) async throws -> Page<AuditEntry> {
        var extra = [URLQueryItem(name: "order", value: "oldest"), URLQueryItem(name: "trail", value: trail.rawValue)]
        if let from { extra.append(URLQueryItem(name: "from", value: from.formatted(.iso8601))) }
        if let to { extra.append(URLQueryItem(name: "to", value: to.formatted(.iso8601))) }
        return try await send(.GET, "/v1/audit" + Self.query(page, extra: extra))
    }

    /// What the trail's cap trimmed from its start (all zero when nothing was).
    func auditTrimmed(trail: AuditTrailOptions.Trail) async throws -> AuditTrim {
        try await send(.GET, "/v1/audit/trimmed?trail=\(trail.rawValue)")
    }

    // MARK: Admins

    func createAdmin(_ admin: NewAdmin) async throws -> CreatedAdmin {
        try await send(.POST, "/v1/admins", body: admin)
    }

    func admins(_ page: PageRequest) async throws -> Page<AdminInfo> {
        try await send(.GET, "/v1/admins" + Self.query(page))
    }

    func admin(_ adminID: String) async throws -> AdminInfo {
        try await send(.GET, "/v1/admins/\(Self.segment(adminID))")
    }

    func rotateAdmin(_ adminID: String, _ rotation: AdminRotation) async throws -> CreatedAdmin {
        try await send(.POST, "/v1/admins/\(Self.segment(adminID))/rotate", body: rotation)
    }

    func revokeAdmin(_ adminID: String) async throws -> RevokedAdmin {
        try await send(.POST, "/v1/admins/\(Self.segment(adminID))/revoke")
    }

    /// Only if the credential is still at `revision` (`If-Match`).
    func revokeAdmin(_ adminID: String, revision: Int) async throws -> RevokedAdmin {
        try await send(.POST, "/v1/admins/\(Self.segment(adminID))/revoke", bodyData: nil, revision: revision)
    }

    // MARK: Transport

    private func send<Response: Decodable & Sendable>(_ method: HTTPMethod, _ path: String) async throws -> Response {
        try await send(method, path, bodyData: nil)
    }

    private func send<Response: Decodable & Sendable>(
        _ method: HTTPMethod, _ path: String, body: some Encodable
    ) async throws -> Response {
        try await send(method, path, bodyData: try AdminJSON.encoder().encode(body))
    }

    private func send<Response: Decodable & Sendable>(
        _ method: HTTPMethod, _ path: String, bodyData: Data?, revision: Int? = nil
    ) async throws -> Response {
        var request = HTTPClientRequest(url: baseURL + path)
        if let revision { request.headers.add(name: RevisionPrecondition.headerName, value: RevisionPrecondition.header(for: revision)) }
        request.method = method
        request.headers.add(name: HeaderName.authorization.name, value: "Bearer \(token)")
        request.headers.add(name: HeaderName.adminActor.name, value: actor)
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "gatewayctl")
        if let bodyData {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: bodyData))
        }

        // A client per call unless shared: most commands make one call per run, and this one
        // is configured to fail fast (see `configuration`), which `HTTPClient.shared` is not.
        let client = shared ?? HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.configuration)
        let owned = shared == nil
        let status: HTTPResponseStatus
        let body: ByteBuffer
        do {
            let response = try await client.execute(request, timeout: Self.timeout)
            status = response.status
            body = try await response.body.collect(upTo: Self.maxResponseBytes)
        } catch is NIOTooManyBytesError {
            if owned { try? await client.shutdown() }
            throw CtlError(
                exitCode: CtlError.refusedExitCode,
                message: "the answer from \(baseURL) is larger than \(Self.maxResponseBytes / 1024 / 1024) MiB"
            )
        } catch {
            if owned { try? await client.shutdown() }
            throw CtlError.unreachable(baseURL, reason: Self.reason(for: error))
        }
        if owned { try? await client.shutdown() }

        guard (200..<300).contains(status.code) else {
            // A change made without its audit entry still hands over what it made (a secret).
            if status == .serviceUnavailable, let unaudited = try? AdminJSON.decoder().decode(UnauditedChangeBody<Response>.self, from: body) {
                throw UnauditedChange(result: unaudited.error.result, failure: Self.failure(status: status, body: body))
            }
            throw Self.failure(status: status, body: body)
        }
        if status == .noContent, let nothing = NoContent() as? Response { return nothing }
        do {
            return try AdminJSON.decoder().decode(Response.self, from: body)
        } catch {
            throw CtlError(
                exitCode: CtlError.refusedExitCode,
                message: "unexpected answer to \(method.rawValue) \(path) from \(baseURL): \(Self.describe(decodingError: error))"
            )
        }
    }

    /// Fails on the first connection error instead of retrying until the timeout, so
    /// "connection refused" is reported at once; never follows redirects, which would carry
    /// the admin token to wherever they point.
    private static var configuration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: timeout, read: timeout)
        )
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    /// The ``CtlError`` for a non-2xx answer: 401 is a token problem (exit 3), anything else
    /// a refusal (exit 1) carrying the API's `code` and `message`. Answers without the API's
    /// error shape (a proxy's HTML page, say) are reported by their status line.
    static func failure(status: HTTPResponseStatus, body: ByteBuffer) -> CtlError {
        let detail = try? AdminJSON.decoder().decode(ErrorBody.self, from: body).error
        if status == .unauthorized {
            return .unauthorized(message: detail?.message ?? "the gateway refused the admin token")
        }
        if let detail {
            return .refused(code: detail.code, message: detail.message)
        }
        return .refused(code: "HTTP \(status.code)", message: "the gateway answered \(status.code) \(status.reasonPhrase)")
    }

    /// Why no response came, in a few words: the libraries' own descriptions are long and
    /// sometimes multi-line.
    static func reason(for error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout: return "no connection within \(timeout.seconds) s"
            case .deadlineExceeded, .readTimeout: return "no answer within \(timeout.seconds) s"
            case .remoteConnectionClosed: return "the connection closed before an answer"
            default: return CtlError.oneLine(String(describing: error))
            }
        }
        if let error = error as? IOError {
            return String(cString: strerror(error.errnoCode)).lowercased()
        }
        // NIOPosix's and NIOSSL's errors (neither a dependency of this target) are only
        // recognisable by their text, e.g. "connection reset (error set): Connection refused
        // (errno: 111)" or a BoringSSL dump; keep the gist.
        let text = CtlError.oneLine(String(describing: error))
        if text.localizedCaseInsensitiveContains("connection refused") {
            return "connection refused"
        }
        if text.contains("UnknownHost") {
            return "unknown host"
        }
        if text.contains("handshakeFailed") || text.contains("NIOSSL") {
            return "TLS handshake failed"
        }
        return text.count > 160 ? text.prefix(157) + "..." : text
    }

    private static func describe(decodingError error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "unexpected value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "not the JSON expected"
        }
    }

    /// `?limit=N&after=CURSOR` and any `extra` parameters, each value percent-encoded.
    static func query(_ page: PageRequest, extra: [URLQueryItem] = []) -> String {
        var components = URLComponents()
        components.queryItems = page.queryItems.map { URLQueryItem(name: $0.name, value: $0.value) } + extra
        return "?" + (components.percentEncodedQuery ?? "")
    }

    /// Ids go into the path as one segment whatever they contain.
    static func segment(_ id: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        return id.addingPercentEncoding(withAllowedCharacters: allowed) ?? id
    }

    /// `text` without trailing slashes if it is an absolute http(s) URL with a host and no
    /// query or fragment (paths are appended to it), else nil.
    static func baseURL(_ text: String) -> String? {
        guard let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil
        else { return nil }
        var url = text
        while url.hasSuffix("/") { url.removeLast() }
        return url
    }

    /// `<$USER or "unknown">@<hostname>`, restricted to characters a header value may hold.
    static func actor(environment: [String: String]) -> String {
        let user = environment["USER"].flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"
        let actor = "\(user)@\(ProcessInfo.processInfo.hostName)"
        return String(actor.unicodeScalars.filter { $0.value > 0x20 && $0.value < 0x7f }.map(Character.init))
    }
}

extension TimeAmount {
    fileprivate var seconds: Int64 { nanoseconds / 1_000_000_000 }
}

/// The answer to a call that answers `204 No Content`.
struct NoContent: Decodable {}

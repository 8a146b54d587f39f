import Foundation
import HTTPTypes
import NIOHTTP1

/// The header rules of SPEC §2.4 for what goes to an upstream and what comes back.
enum ForwardedHeaders {
    /// RFC 9110 §7.6.1 hop-by-hop fields, plus the de-facto ones proxies drop.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
        "upgrade", "proxy-authenticate", "proxy-authorization",
    ]

    /// The request headers for the upstream: every `X-Gateway-*` and hop-by-hop field removed
    /// (including those the client listed in `Connection`), `Authorization` removed unless the
    /// route forwards it, then the gateway's own identity and forwarding headers set.
    static func request(
        from incoming: HTTPFields,
        route: ProxyRoute,
        identity: [(String, String)],
        requestID: String,
        forwardedFor: String?,
        host: String?
    ) -> HTTPHeaders {
        let connectionListed = listedInConnection(incoming)
        var outgoing = HTTPHeaders()
        outgoing.reserveCapacity(incoming.count + 9)
        outgoing.add(name: "Host", value: route.upstreamAuthority)
        for field in incoming {
            let name = field.name.canonicalName
            if name.hasPrefix("x-gateway-") || hopByHop.contains(name) || connectionListed.contains(name) { continue }
            switch name {
            case "authorization" where !route.forwardAuthorization: continue
            // Expect: the gateway answered 100-continue itself (ClientProtectionHandler).
            case "x-request-id", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "host", "expect": continue
            default:
                outgoing.add(name: field.name.rawName, value: field.value)
            }
        }
        for (name, value) in identity {
            outgoing.add(name: name, value: value)
        }
        outgoing.add(name: "X-Request-Id", value: requestID)
        if let forwardedFor {
            outgoing.add(name: "X-Forwarded-For", value: forwardedFor)
        }
        outgoing.add(name: "X-Forwarded-Proto", value: "http")
        if let host { outgoing.add(name: "X-Forwarded-Host", value: host) }
        return outgoing
    }

    /// The upstream's response headers for the client, hop-by-hop fields removed.
    ///
    /// Runs on every proxied response, so the usual names are looked up in a table made once
    /// (building an `HTTPField.Name` validates and lowercases the name, allocating each time).
    static func response(from upstream: HTTPHeaders) -> HTTPFields {
        var listed: Set<String> = []
        for value in upstream["connection"] {
            for token in value.split(separator: ",") {
                let name = token.drop { $0 == " " || $0 == "\t" }.lowercased()
                let trimmed = String(name.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
                if !hopByHop.contains(trimmed) { listed.insert(trimmed) }
            }
        }
        var fields = HTTPFields()
        fields.reserveCapacity(upstream.count)
        for (name, value) in upstream {
            let fieldName: HTTPField.Name
            if let known = knownResponseNames[name] {
                if known.hopByHop { continue }
                fieldName = known.name
            } else {
                guard let made = HTTPField.Name(name), !hopByHop.contains(made.canonicalName) else { continue }
                fieldName = made
            }
            if !listed.isEmpty && listed.contains(fieldName.canonicalName) { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return fields
    }

    /// Names upstreams commonly send, as they usually spell them and in lowercase.
    private static let knownResponseNames: [String: (name: HTTPField.Name, hopByHop: Bool)] = {
        let common = [
            "Content-Type", "Content-Length", "Date", "Server", "Cache-Control", "ETag", "Last-Modified",
            "Vary", "Location", "Set-Cookie", "Content-Encoding", "Expires", "Pragma", "Age",
            "Access-Control-Allow-Origin", "X-Request-Id", "Retry-After", "WWW-Authenticate",
            "Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Trailer", "Proxy-Authenticate",
        ]
        var table: [String: (name: HTTPField.Name, hopByHop: Bool)] = [:]
        for spelling in common {
            let name = HTTPField.Name(spelling)!
            let entry = (name: name, hopByHop: hopByHop.contains(name.canonicalName))
            table[spelling] = entry
            table[name.canonicalName] = entry
        }
        return table
    }()

    /// Trailers for the client: what HTTPTypes accepts (all of a well-formed upstream's).
    static func trailers(from upstream: HTTPHeaders) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in upstream {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return fields
    }

    private static func listedInConnection(_ fields: HTTPFields) -> Set<String> {
        var listed = Set<String>()
        for value in fields[values: .connection] {
            for token in value.split(separator: ",") {
                listed.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        return listed
    }
}

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
    static func response(from upstream: HTTPHeaders) -> HTTPFields {
        var listed = Set<String>()
        for value in upstream["connection"] {
            for token in value.split(separator: ",") {
                listed.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        var fields = HTTPFields()
        fields.reserveCapacity(upstream.count)
        for (name, value) in upstream {
            guard let fieldName = HTTPField.Name(name) else { continue }
            let lowered = fieldName.canonicalName
            if hopByHop.contains(lowered) || (!listed.isEmpty && listed.contains(lowered)) { continue }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        return fields
    }

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

import Foundation
import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

/// `GET /v1/audit?trail=actions|refusals&limit=N&after=ID&order=newest|oldest&from=T&to=T`: a
/// trail one page at a time, newest first by default; oldest first is what an export or a
/// chain check walks. `GET /v1/audit/trimmed?trail=...`: what its cap trimmed from its start.
struct AuditController {
    let log: AuditLog

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("audit") { request, _ -> Page<AuditEntry> in
            let page = try AdminValidation.page(request, defaultLimit: PageRequest.defaultAuditLimit)
            let query = request.uri.queryParameters
            let trail = try Self.trail(query["trail"])
            let window = AuditWindow(from: try Self.time(query["from"], field: "from"), to: try Self.time(query["to"], field: "to"))
            let found: (entries: [AuditLog.Entry], more: Bool)
            switch query["order"].map(String.init) ?? "newest" {
            case "newest": found = try await log.newest(page.limit, before: page.after, window: window, trail: trail)
            case "oldest": found = try await log.oldest(page.limit, after: page.after, window: window, trail: trail)
            default: throw GatewayError.invalidRequest("order must be newest or oldest")
            }
            return Page(items: found.entries.map(AuditEntry.init), nextCursor: found.more ? found.entries.last?.id : nil)
        }
        group.get("audit/trimmed") { request, _ -> AuditTrim in
            try await log.trimmed(try Self.trail(request.uri.queryParameters["trail"])) ?? AuditTrim(entries: 0, lastSeq: 0, lastHash: "")
        }
    }

    /// `actions` (the default) or `refusals`.
    static func trail(_ text: Substring?) throws -> AuditLog.Trail {
        guard let text else { return .actions }
        guard let trail = AuditLog.Trail(rawValue: String(text)) else { throw GatewayError.invalidRequest("trail must be actions or refusals") }
        return trail
    }

    /// An RFC 3339 time (`2026-11-22T03:30:00Z`, fractional seconds allowed).
    static func time(_ text: Substring?, field: String) throws -> Date? {
        guard let text else { return nil }
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = plain.date(from: String(text)) ?? fractional.date(from: String(text)) else {
            throw GatewayError.invalidRequest("\(field) must be an RFC 3339 time such as 2026-11-22T03:30:00Z")
        }
        return date
    }
}

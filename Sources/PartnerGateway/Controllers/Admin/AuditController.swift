import GatewayContract
import Hummingbird
import KeyRegistry

/// `GET /v1/audit?limit=N&after=ID`: the newest admin actions first, one page at a time.
struct AuditController {
    let log: AuditLog

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("audit") { request, _ -> Page<AuditEntry> in
            let page = try AdminValidation.page(request, defaultLimit: PageRequest.defaultAuditLimit)
            let (entries, more) = try await log.newest(page.limit, before: page.after)
            return Page(items: entries.map(AuditEntry.init), nextCursor: more ? entries.last?.id : nil)
        }
    }
}

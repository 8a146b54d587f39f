import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

/// `GET /portal/v1/audit?limit=&after=`: the partner's own entries of the audit trail (what its
/// members did, and tried and were refused), newest first, in the admin API's entry shape.
/// `next_cursor` names the trail with the entry (`actions:<id>`).
struct PortalAuditController {
    let log: AuditLog

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("audit") { request, _ -> Page<AuditEntry> in
            let page = try AdminValidation.page(request, defaultLimit: PageRequest.defaultAuditLimit)
            let found = try await log.partnerEntries(try PortalCaller.required().partner.id, limit: page.limit, before: page.after)
            return Page(items: found.entries.map(AuditEntry.init), nextCursor: found.next)
        }
    }
}

import Hummingbird
import KeyRegistry

/// `GET /v1/audit?limit=N`: the newest admin actions first.
struct AuditController {
    let log: AuditLog

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("audit") { request, _ -> ListBody<AuditEntryBody> in
            let limit: Int
            if let text = request.uri.queryParameters["limit"] {
                guard let parsed = Int(text), (1...1000).contains(parsed) else {
                    throw GatewayError.invalidRequest("limit must be a whole number from 1 to 1000")
                }
                limit = parsed
            } else {
                limit = 50
            }
            return ListBody(items: try await log.newest(limit).map(AuditEntryBody.init))
        }
    }
}

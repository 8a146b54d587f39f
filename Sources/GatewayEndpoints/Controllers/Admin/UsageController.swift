import Foundation
import GatewayContract
import GatewayEdge
import Hummingbird
import KeyRegistry

/// `GET /v1/keys/{key_id}/usage` and `GET /v1/partners/{partner_id}/usage`: calls by outcome
/// per day, from ``UsageReport`` (docs/admin-api.md, "Usage"). Reads only, so no audit entry.
struct UsageController {
    let registry: KeyRegistry
    let report: UsageReport
    let calendar: QuotaCalendar

    init(_ dependencies: some EndpointDependencies) {
        registry = dependencies.registry
        report = UsageReport(redis: dependencies.redis)
        calendar = dependencies.quotaCalendar
    }

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("keys/:key/usage", use: key)
        group.get("partners/:partner/usage", use: partner)
    }

    @Sendable func key(_ request: Request, context: GatewayRequestContext) async throws -> UsageInfo {
        let keyID = try AdminValidation.id(context.parameters.get("key") ?? "", prefix: "key_")
        let days = try range(request)
        guard try await registry.key(id: keyID) != nil else { throw GatewayError.notFound(what: "key") }
        return try await usage(ofKey: keyID, days: days)
    }

    @Sendable func partner(_ request: Request, context: GatewayRequestContext) async throws -> UsageInfo {
        let partnerID = try AdminValidation.id(context.parameters.get("partner") ?? "", prefix: "ptr_")
        return try await usage(ofPartner: partnerID, days: try range(request))
    }

    /// One key's report; the admin API's and the portal's.
    func usage(ofKey keyID: String, days: [String]) async throws -> UsageInfo {
        UsageInfo(keyID: keyID, timeZone: calendar.timeZone.identifier, days: try await report.days(days, keyIDs: [keyID]).map(Self.info))
    }

    /// A partner's report, summed over its keys; the admin API's and the portal's.
    func usage(ofPartner partnerID: String, days: [String]) async throws -> UsageInfo {
        let keyIDs = try await registry.keys(partnerID: partnerID).map(\.id)
        return UsageInfo(partnerID: partnerID, timeZone: calendar.timeZone.identifier, days: try await report.days(days, keyIDs: keyIDs).map(Self.info))
    }

    /// The days `from` to `to` name (both required, `YYYY-MM-DD`, at most
    /// ``QuotaCalendar/maximumRangeDays``), the range checked before any day is listed.
    func range(_ request: Request) throws -> [String] {
        let query = request.uri.queryParameters
        guard let from = query["from"].map(String.init), let to = query["to"].map(String.init) else {
            throw GatewayError.invalidRequest("from and to are required, as YYYY-MM-DD")
        }
        guard calendar.start(of: from) != nil else { throw GatewayError.invalidRequest("from is not a date as YYYY-MM-DD") }
        guard calendar.start(of: to) != nil else { throw GatewayError.invalidRequest("to is not a date as YYYY-MM-DD") }
        guard let count = calendar.dayCount(from: from, to: to), count >= 1 else { throw GatewayError.invalidRequest("to is before from") }
        guard count <= QuotaCalendar.maximumRangeDays, let days = calendar.days(from: from, to: to) else {
            throw GatewayError.invalidRequest("at most \(QuotaCalendar.maximumRangeDays) days per request")
        }
        return days
    }

    static func info(_ day: UsageReport.Day) -> UsageInfo.Day {
        UsageInfo.Day(
            date: day.date, allowed: day[.allowed], refusedAuth: day[.refusedAuth], refusedLimit: day[.refusedLimit],
            refusedQuota: day[.refusedQuota], upstream2xx: day[.upstream2xx], upstream4xx: day[.upstream4xx], upstream5xx: day[.upstream5xx]
        )
    }
}

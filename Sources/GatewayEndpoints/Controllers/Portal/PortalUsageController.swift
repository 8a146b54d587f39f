import Foundation
import GatewayContract
import GatewayEdge
import HTTPTypes
import Hummingbird
import KeyRegistry
import NIOCore
import NIOFoundationCompat

/// `GET /portal/v1/usage?from=&to=[&key_id=]`: the admin API's usage report (``UsageController``)
/// of the caller's partner, or of one of its keys; as CSV for `Accept: text/csv`.
struct PortalUsageController {
    let usage: UsageController
    let registry: KeyRegistry

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("usage") { request, _ -> Response in
            let days = try usage.range(request)
            let report: UsageInfo
            if let key = request.uri.queryParameters["key_id"] {
                report = try await usage.usage(ofKey: try await PortalKeysController.ownKey(String(key), registry: registry), days: days)
            } else {
                report = try await usage.usage(ofPartner: try PortalCaller.required().partner.id, days: days)
            }
            return try Self.answer(report, request: request, first: days.first ?? "", last: days.last ?? "")
        }
    }

    /// JSON, or the report's CSV when the client prefers `text/csv`, as a download.
    static func answer(_ report: UsageInfo, request: Request, first: String, last: String) throws -> Response {
        let accept = request.headers[values: .accept].joined(separator: ",").lowercased()
        if accept.contains("text/csv") {
            let name = "usage-\(report.keyID ?? report.partnerID ?? "")-\(first)-\(last).csv"
            return Response(
                status: .ok,
                headers: [.contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"\(name)\"", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: report.csv))
            )
        }
        let data = try AdminJSON.encoder().encode(report)
        return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(data: data)))
    }
}

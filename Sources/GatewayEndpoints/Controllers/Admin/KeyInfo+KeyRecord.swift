import Foundation
import GatewayContract
import KeyRegistry

extension KeyInfo {
    /// The record as of `now`: an active key past its expiry shows as expired.
    init(_ record: KeyRecord, now: Date) {
        self.init(
            keyID: record.id,
            partnerID: record.partnerID,
            start: record.start,
            name: record.name,
            meta: record.meta,
            status: record.status(at: now).rawValue,
            scopes: record.scopes,
            createdAt: record.createdAt,
            expiresAt: record.expiresAt,
            lastUsedAt: record.lastUsedAt,
            allowedCIDRs: record.allowedNetworks.texts,
            quota: record.quota.map { QuotaSetting(limit: $0.limit, period: $0.period.rawValue) },
            revision: record.revision
        )
    }
}

import GatewayContract
import KeyRegistry

extension PartnerInfo {
    init(_ partner: Partner) {
        self.init(
            partnerID: partner.id,
            name: partner.name,
            status: partner.status.rawValue,
            scopes: partner.scopes,
            rateLimit: .init(rate: partner.rate, burst: partner.burst),
            createdAt: partner.createdAt,
            allowedCIDRs: partner.allowedNetworks.texts,
            quota: partner.quota.map { QuotaSetting(limit: $0.limit, period: $0.period.rawValue) },
            maxKeys: partner.maxKeys,
            revision: partner.revision
        )
    }
}

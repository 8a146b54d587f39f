import GatewayContract
import Hummingbird

// The admin API answers with the contract's types as they are: Hummingbird writes them with
// its JSON encoder (times as RFC 3339, as ``AdminJSON`` reads them).
extension PartnerInfo: ResponseEncodable {}
extension CreatedKey: ResponseEncodable {}
extension KeyInfo: ResponseEncodable {}
extension RotatedKey: ResponseEncodable {}
extension RevokedKey: ResponseEncodable {}
extension SessionRevocation: ResponseEncodable {}
extension Page: ResponseEncodable {}
extension FoundUser: ResponseEncodable {}
extension RevokedSession: ResponseEncodable {}
extension CreatedAdmin: ResponseEncodable {}
extension AdminInfo: ResponseEncodable {}
extension RevokedAdmin: ResponseEncodable {}
extension ErasedUser: ResponseEncodable {}
extension UsageInfo: ResponseEncodable {}
extension AuditTrim: ResponseEncodable {}
extension MemberInfo: ResponseEncodable {}
extension PortalMe: ResponseEncodable {}

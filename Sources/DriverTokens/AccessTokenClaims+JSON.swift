import GatewayPrimitives

extension AccessTokenClaims {
    /// The claims' JSON, the same fields in the same order as ``encode(to:)`` writes them
    /// (integer NumericDates, `partner_id` only for the SDK channel), written straight to
    /// bytes: Foundation's `JSONEncoder` was the largest part of a signature's cost, and
    /// every login, refresh and SDK mint signs one.
    var json: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        bytes.append(contentsOf: #"{"user_id":"#.utf8)
        JSONText.appendQuoted(userID, to: &bytes)
        bytes.append(contentsOf: #","exp":"#.utf8)
        JSONText.appendDecimal(Self.seconds(expiresAt), to: &bytes)
        bytes.append(contentsOf: #","iat":"#.utf8)
        JSONText.appendDecimal(Self.seconds(issuedAt), to: &bytes)
        if let notBefore {
            bytes.append(contentsOf: #","nbf":"#.utf8)
            JSONText.appendDecimal(Self.seconds(notBefore), to: &bytes)
        }
        bytes.append(contentsOf: #","jti":"#.utf8)
        JSONText.appendQuoted(tokenID, to: &bytes)
        bytes.append(contentsOf: #","iss":"#.utf8)
        JSONText.appendQuoted(issuer, to: &bytes)
        bytes.append(contentsOf: #","sid":"#.utf8)
        JSONText.appendQuoted(sessionID, to: &bytes)
        bytes.append(contentsOf: #","channel":"#.utf8)
        JSONText.appendQuoted(channel.name, to: &bytes)
        if let partnerID = channel.partnerID {
            bytes.append(contentsOf: #","partner_id":"#.utf8)
            JSONText.appendQuoted(partnerID, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}

import NIOHPACK

/// RFC 9113 §8.2's rules for the fields of a header block a client sent, the checks
/// NIOHTTP2's own header-block validation makes, made here instead (it is off,
/// ``HTTP2Limits``): the router reads every block once, as it lays the request out, so the
/// checks ride on that pass rather than on a second one inside NIOHTTP2. A block that breaks
/// one is malformed (RFC 9113 §8.1.1): its stream is reset with `PROTOCOL_ERROR`.
///
/// The request's pseudo-fields (which, how often, their values) are checked where they are read,
/// in ``HTTP2RequestHead``; what is here applies to every regular field, of a request or of
/// its trailers.
package enum HTTP2FieldRules {
    /// A regular field that may appear in a request or its trailers: a lower-case token for a
    /// name (HTTP/2 sends names in lower case), not one of HTTP/1's connection-specific fields,
    /// no NUL, CR or LF in the value (they would end a line of the HTTP/1 head it becomes).
    package static func isValidRegularField(name: String, value: String) -> Bool {
        guard isLowercaseToken(name), !isConnectionSpecific(name) else { return false }
        return !value.utf8.contains { $0 == 0x00 || $0 == 0x0A || $0 == 0x0D }
    }

    /// `te` in a request: only "trailers" (RFC 9113 §8.2.2).
    package static func isValidRequestTE(_ value: String) -> Bool {
        value == "trailers"
    }

    /// A pseudo-field's value: no control byte, space or DEL (none of their grammars has one,
    /// and a space in `:path` would split the HTTP/1 request line); bytes above 0x7F pass.
    package static func isValidPseudoValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 <= 0x20 || $0 == 0x7F }
    }

    /// A trailer block: regular fields only, each valid.
    package static func areValidTrailers(_ block: HPACKHeaders) -> Bool {
        for (name, value, _) in block {
            guard isValidRegularField(name: name, value: value) else { return false }
        }
        return true
    }

    /// RFC 9110's `tchar` without the upper-case letters; not empty.
    private static func isLowercaseToken(_ name: String) -> Bool {
        var count = 0
        for byte in name.utf8 {
            count += 1
            switch byte {
            case 0x21, 0x23...0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x30...0x39, 0x5E...0x7A, 0x7C, 0x7E: continue
            default: return false
            }
        }
        return count > 0
    }

    /// RFC 9113 §8.2.2's connection-specific fields, forbidden by name.
    private static func isConnectionSpecific(_ name: String) -> Bool {
        switch name.utf8.count {
        case 7: name == "upgrade"
        case 10: name == "connection" || name == "keep-alive"
        case 16: name == "proxy-connection"
        case 17: name == "transfer-encoding"
        default: false
        }
    }
}

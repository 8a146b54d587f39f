/// An Indian mobile number, normalised to its 10 digits (docs/public-api.md).
///
/// The full number is needed twice (to hash it, and to hand it to the SMS provider) and
/// must never be logged or stored (docs/security-model.md), so the type prints only its masked form.
public struct PhoneNumber: Sendable, Hashable {
    /// The 10 digits, `[6-9]` first. Never log or store this.
    public let digits: String

    /// Parses what a client sent: 10 digits starting with 6–9, optionally prefixed by `+91`
    /// or `91`. Anything else (spaces, dashes, a leading 0, other countries) is refused, so
    /// that one phone has exactly one spelling after normalisation.
    public init?(_ text: String) {
        let utf8 = text.utf8
        guard utf8.count <= 13 else { return nil }
        var candidate = Substring(text)
        if utf8.count == 13, candidate.hasPrefix("+91") {
            candidate = candidate.dropFirst(3)
        } else if utf8.count == 12, candidate.hasPrefix("91") {
            candidate = candidate.dropFirst(2)
        }
        let bytes = Array(candidate.utf8)
        guard bytes.count == 10,
            (UInt8(ascii: "6")...UInt8(ascii: "9")).contains(bytes[0]),
            bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        digits = String(candidate)
    }

    /// `******3210`: what logs and the user record show.
    public var masked: String { "******" + digits.suffix(4) }

    /// E.164 (`+919876543210`), the form SMS providers expect.
    public var international: String { "+91" + digits }
}

extension PhoneNumber: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { masked }
    public var debugDescription: String { masked }
    public var customMirror: Mirror { Mirror(self, children: ["masked": masked]) }
}

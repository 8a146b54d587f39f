import Crypto
import Foundation
import GatewayPrimitives

/// A refresh token: 64 lowercase hex characters (256 bits).
///
/// The first 16 characters are the family id, shared by every token of one login, so a
/// presented token names its family even after its own record is gone; that is what lets
/// the server revoke a whole login when a spent token is replayed (docs/public-api.md). The other 48
/// characters (192 bits) are fresh CSPRNG output for a login's first token and an HMAC of its
/// predecessor under a server key for every later one (``successor(derivedWith:)``), so
/// knowing a family id (it appears in access tokens as `sid` and in logs) does not help
/// guess a token.
public struct RefreshToken: Sendable, Hashable {
    public static let length = 64
    public static let familyIDLength = 16

    /// The login session this token belongs to (also the access tokens' `sid`).
    public let familyID: String
    /// The whole token, to hand to the client once. Store only ``sha256Hex``.
    public let value: String

    private init(familyID: String, value: String) {
        self.familyID = familyID
        self.value = value
    }

    /// A token opening a new login session (a new family).
    public static func newFamily() -> RefreshToken {
        successor(familyID: RandomHex.string(byteCount: familyIDLength / 2))
    }

    /// A token opening the login session `familyID` (chosen by the caller, to place its keys),
    /// or nil if `familyID` is not 16 lowercase hex characters.
    public static func newFamily(id familyID: String) -> RefreshToken? {
        isValidFamilyID(familyID) ? successor(familyID: familyID) : nil
    }

    /// A fresh random token of this token's login session (one the server never issued).
    public func randomSibling() -> RefreshToken {
        Self.successor(familyID: familyID)
    }

    /// The token that follows this one in its login session: always the same for the same
    /// token and key, so a retried refresh can be answered with the successor it already got.
    public func successor(derivedWith key: RefreshSuccessorKey) -> RefreshToken {
        RefreshToken(familyID: familyID, value: familyID + key.successorSuffix(of: value))
    }

    /// The next token of the login session `familyID`, or nil if `familyID` is not 16
    /// lowercase hex characters.
    public static func successor(inFamily familyID: String) -> RefreshToken? {
        isValidFamilyID(familyID) ? successor(familyID: familyID) : nil
    }

    /// Parses what a client presented: exactly 64 characters of `[0-9a-f]`, else nil.
    ///
    /// Validating before anything touches Redis keeps junk (and huge strings) out of key
    /// names and hashing.
    public init?(parsing text: String) {
        guard Hex.isLowercase(text, count: Self.length) else { return nil }
        self.init(familyID: String(text.prefix(Self.familyIDLength)), value: text)
    }

    /// Whether `text` has the shape of a family id (16 lowercase hex characters).
    public static func isValidFamilyID(_ text: String) -> Bool {
        Hex.isLowercase(text, count: familyIDLength)
    }

    /// SHA-256 of the token, in lowercase hex: what the server stores and looks up.
    ///
    /// A plain (unsalted, fast) hash is enough because the token has 192+ random bits:
    /// there is no dictionary to attack, and a Redis dump then holds nothing usable.
    public var sha256Hex: String {
        Hex.encode(SHA256.hash(data: Array(value.utf8)))
    }

    private static func successor(familyID: String) -> RefreshToken {
        RefreshToken(
            familyID: familyID,
            value: familyID + RandomHex.string(byteCount: (length - familyIDLength) / 2))
    }
}

extension RefreshToken: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Shows the family only: the token is a credential and must never reach a log.
    public var description: String { "RefreshToken(family: \(familyID))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["familyID": familyID]) }
}

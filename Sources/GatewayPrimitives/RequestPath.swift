/// The canonical form of a request target's path, made once before anything routes on it.
///
/// Why: routes match path prefixes, and most upstream frameworks resolve `..`, decode `%XX`
/// and merge slashes before they dispatch. Matching the raw path would let
/// `/open/../admin`, `/open/%61dmin` or `/open//admin` pass under an open route and reach a
/// protected resource upstream. So the gateway decides on, and forwards, exactly the path an
/// upstream will understand, with Envoy's `normalize_path`, `merge_slashes` and
/// `path_with_escaped_slashes_action: REJECT_REQUEST` as the model:
///
/// - `%XX` of an unreserved character (`A-Z a-z 0-9 - . _ ~`) is decoded; every other
///   escape is kept, with upper-case hex digits;
/// - runs of `/` become one;
/// - `.` and `..` segments are removed (RFC 3986 §5.2.4), also when written `%2E`;
/// - refused: an escaped `/` or `\` (`%2F`, `%5C`), a raw `\`, a NUL or other control
///   character (raw or escaped), a malformed escape, a fragment (`#`), a `.` or `..`
///   segment carrying `;` parameters (`/..;/`, which servlet containers resolve, also as
///   `/..%3B/`, which they decode first), and a
///   `..` that would climb above the root.
///
/// The query string is not touched. The common, already-canonical path is recognised by one
/// scan and costs no allocation.
package struct RequestPath: Sendable, Equatable {
    /// Why a target was refused; every one is `400 INVALID_REQUEST` to the client.
    package enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case encodedSlash
        case backslash
        case controlCharacter
        case malformedEscape
        case fragment
        case dotSegmentWithParameters
        case aboveRoot
        case notAPath

        package var description: String {
            switch self {
            case .encodedSlash: "the path contains an encoded slash or backslash"
            case .backslash: "the path contains a backslash"
            case .controlCharacter: "the path contains a control character"
            case .malformedEscape: "the path contains a malformed percent-encoding"
            case .fragment: "the request target contains a fragment"
            case .dotSegmentWithParameters: "the path contains a dot segment with parameters"
            case .aboveRoot: "the path climbs above the root"
            case .notAPath: "the request target is not a path"
            }
        }
    }

    /// What became of a request target.
    package enum Target: Sendable, Equatable {
        /// Already canonical (the usual case): use it as it is.
        case unchanged
        /// The canonical origin-form target (path, then the query as sent); `host` is the
        /// authority of an absolute-form target, which replaces the `Host` header
        /// (RFC 9112 §3.2.2).
        case rewritten(String, host: String?)
        case refused(Refusal)
    }

    /// The canonical path, always starting with `/`.
    package let path: String

    /// Normalises `path` (no query), or throws why it is refused.
    package init(_ path: Substring) throws(Refusal) {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/") else { throw .notAPath }
        if Self.isCanonical(bytes) {
            self.path = String(path)
        } else {
            self.path = String(decoding: try Self.canonicalBytes(bytes), as: UTF8.self)
        }
    }

    /// An origin-form target's path: the target without its query.
    package static func path(ofTarget target: String) -> Substring {
        target.utf8.firstIndex(of: UInt8(ascii: "?")).map { target[..<$0] } ?? Substring(target)
    }

    /// The canonical form of a whole request target: origin-form (`/path?query`), `*`, or
    /// absolute-form (`http://host/path?query`, rewritten to origin-form).
    package static func normalize(target: String) -> Target {
        let bytes = target.utf8
        var host: String?
        var pathAndQuery = Substring(target)
        if bytes.first != UInt8(ascii: "/") {
            if target == "*" { return .unchanged }
            guard let (authority, rest) = splitAbsoluteForm(target) else { return .refused(.notAPath) }
            host = String(authority)
            pathAndQuery = rest.isEmpty ? "/" : rest
            if pathAndQuery.utf8.first == UInt8(ascii: "?") { pathAndQuery = "/" + pathAndQuery }
        }
        let path: Substring
        let query: Substring?
        if let mark = pathAndQuery.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = pathAndQuery[..<mark]
            query = pathAndQuery[mark...]
        } else {
            path = pathAndQuery
            query = nil
        }
        if host == nil && isCanonical(path.utf8) { return .unchanged }
        do {
            let canonical = try RequestPath(path)
            // Escapes already in canonical form (`%20`) come back as they were.
            if host == nil && canonical.path.utf8.elementsEqual(path.utf8) { return .unchanged }
            return .rewritten(canonical.path + (query ?? ""), host: host)
        } catch {
            return .refused(error)
        }
    }

    /// `http://authority/rest` or `https://...` (scheme in any case) split after the
    /// authority; nil for anything else.
    private static func splitAbsoluteForm(_ target: String) -> (Substring, Substring)? {
        let bytes = target.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = target[..<colon]
        guard HeaderName.equals(String(scheme), "http") || HeaderName.equals(String(scheme), "https") else { return nil }
        let afterScheme = target[colon...]
        guard afterScheme.hasPrefix("://") else { return nil }
        let authorityStart = afterScheme.utf8.index(afterScheme.startIndex, offsetBy: 3)
        let rest = target[authorityStart...]
        let authorityEnd = rest.utf8.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        // No user information (`user@host`): it has no place in a request (RFC 9110 §4.2.4).
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        return (authority, rest[authorityEnd...])
    }

    /// Whether `path` needs no work: no escape, backslash, control character, fragment,
    /// repeated slash or dot segment. One pass, no allocation.
    package static func isCanonical(_ path: Substring.UTF8View) -> Bool {
        var segmentStart = true
        var index = path.startIndex
        while index < path.endIndex {
            let byte = path[index]
            switch byte {
            case UInt8(ascii: "/"):
                if segmentStart && index != path.startIndex { return false }  // "//"
                segmentStart = true
            case UInt8(ascii: "%"), UInt8(ascii: "\\"), UInt8(ascii: "#"), 0..<0x20, 0x7F:
                return false
            case UInt8(ascii: ".") where segmentStart:
                // "." or ".." as a whole segment (or before ";" parameters).
                var next = path.index(after: index)
                if next < path.endIndex && path[next] == UInt8(ascii: ".") { next = path.index(after: next) }
                if next == path.endIndex || path[next] == UInt8(ascii: "/") || path[next] == UInt8(ascii: ";") { return false }
                segmentStart = false
            default:
                segmentStart = false
            }
            index = path.index(after: index)
        }
        return true
    }

    /// The slow path: decode, merge slashes, remove dot segments.
    private static func canonicalBytes(_ path: Substring.UTF8View) throws(Refusal) -> [UInt8] {
        let decoded = try decodedUnreserved(path)
        var segments: [ArraySlice<UInt8>] = []
        var trailingSlash = false
        // decoded[0] is "/"; each segment runs up to the next "/".
        var start = decoded.index(after: decoded.startIndex)
        while true {
            let end = decoded[start...].firstIndex(of: UInt8(ascii: "/")) ?? decoded.endIndex
            let segment = decoded[start..<end]
            let isLast = end == decoded.endIndex
            let bare = withoutParameters(segment)
            let isDot = bare.elementsEqual([UInt8(ascii: ".")])
            let isDotDot = bare.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")])
            if (isDot || isDotDot) && bare.count != segment.count { throw .dotSegmentWithParameters }
            if segment.isEmpty || isDot {
                // A repeated slash or "." adds nothing; at the end it leaves the slash.
                if isLast { trailingSlash = true }
            } else if isDotDot {
                guard !segments.isEmpty else { throw .aboveRoot }
                segments.removeLast()
                if isLast { trailingSlash = true }
            } else {
                segments.append(segment)
                if isLast { trailingSlash = false }
            }
            if isLast { break }
            start = decoded.index(after: end)
        }
        var canonical: [UInt8] = [UInt8(ascii: "/")]
        canonical.reserveCapacity(decoded.count)
        for (position, segment) in segments.enumerated() {
            if position > 0 { canonical.append(UInt8(ascii: "/")) }
            canonical.append(contentsOf: segment)
        }
        if trailingSlash && !segments.isEmpty { canonical.append(UInt8(ascii: "/")) }
        return canonical
    }

    /// The path with unreserved escapes decoded and the others upper-cased; refuses what can
    /// never be part of a path the gateway forwards.
    private static func decodedUnreserved(_ path: Substring.UTF8View) throws(Refusal) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(path.count)
        var index = path.startIndex
        while index < path.endIndex {
            let byte = path[index]
            index = path.index(after: index)
            switch byte {
            case UInt8(ascii: "\\"): throw .backslash
            case UInt8(ascii: "#"): throw .fragment
            case 0..<0x20, 0x7F: throw .controlCharacter
            case UInt8(ascii: "%"):
                guard index < path.endIndex, let high = hexValue(path[index]) else { throw .malformedEscape }
                index = path.index(after: index)
                guard index < path.endIndex, let low = hexValue(path[index]) else { throw .malformedEscape }
                index = path.index(after: index)
                let value = high << 4 | low
                switch value {
                case UInt8(ascii: "/"), UInt8(ascii: "\\"): throw .encodedSlash
                case 0..<0x20, 0x7F: throw .controlCharacter
                default:
                    if isUnreserved(value) {
                        output.append(value)
                    } else {
                        output.append(contentsOf: [UInt8(ascii: "%"), upperHex[Int(high)], upperHex[Int(low)]])
                    }
                }
            default:
                output.append(byte)
            }
        }
        return output
    }

    /// `path` (canonical) with each segment's `;` parameters (also `%3B`) removed and the
    /// empty segments that leaves dropped, or nil when that changes nothing (the usual path:
    /// one scan). Servlet containers and Spring dispatch `/admin;x/secret` as `/admin/secret`,
    /// while other servers keep `admin;x` as a name: routing refuses a path the two readings split.
    package static func withoutParameters(_ path: Substring) -> Substring? {
        guard path.utf8.contains(where: { $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: "%") }) else { return nil }
        var bare: [UInt8] = []
        for segment in Array(path.utf8).split(separator: UInt8(ascii: "/")) {
            let name = withoutParameters(segment)
            if name.isEmpty { continue }
            bare.append(UInt8(ascii: "/"))
            bare.append(contentsOf: name)
        }
        if bare.isEmpty || path.utf8.last == UInt8(ascii: "/") { bare.append(UInt8(ascii: "/")) }
        return bare.elementsEqual(path.utf8) ? nil : Substring(String(decoding: bare, as: UTF8.self))
    }

    /// `segment` up to its `;` parameters, the `;` also written `%3B`: servlet containers
    /// decode before they strip parameters, so `..%3B` is `..` to them. Escapes are already
    /// upper-cased here (``decodedUnreserved(_:)``).
    private static func withoutParameters(_ segment: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var index = segment.startIndex
        while index < segment.endIndex {
            if segment[index] == UInt8(ascii: ";") { break }
            if segment[index] == UInt8(ascii: "%"), segment[index...].starts(with: [UInt8(ascii: "%"), UInt8(ascii: "3"), UInt8(ascii: "B")]) { break }
            index += 1
        }
        return segment[..<index]
    }

    private static let upperHex = Array("0123456789ABCDEF".utf8)

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// RFC 3986 §2.3.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}

extension RequestPath {
    /// A route's `path_prefix` as routes are matched and compared: without a trailing slash
    /// (`/user/` and `/user` take the same paths), empty for `/`.
    package static func canonicalPrefix(_ pathPrefix: String) -> String {
        var prefix = pathPrefix
        while prefix.hasSuffix("/") { prefix.removeLast() }
        return prefix
    }
}
